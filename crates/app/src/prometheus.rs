//! `metrics.bind`: the Prometheus listener (docs/contract.md, "Operations at scale").
//!
//! Counters and histograms are recorded where things happen, through the `metrics` facade
//! (requests: `adapters_http::middleware::request_metrics`; webhook deliveries and connector
//! sends: their queues in `adapters_postgres`); gauges that describe shared state (the queues'
//! backlog, the pools) are read when `/metrics` is scraped. `docs/deployment.md` lists every series
//! with a dashboard query.

use std::net::TcpListener;
use std::sync::OnceLock;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::{web, App, HttpResponse, HttpServer};
use adapters_postgres::Db;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Queue backlog, by `queue` (`webhooks`, `connectors`, `mail`).
pub const QUEUE_DEPTH: &str = "wms_queue_depth";
/// How long the longest-due item of each `queue` has waited since it fell due, in seconds.
pub const QUEUE_OLDEST: &str = "wms_queue_oldest_due_age_seconds";
/// Pooled connections by `pool` and `state` (`in_use`, `idle`).
pub const POOL_CONNECTIONS: &str = "wms_db_pool_connections";
/// The most connections each `pool` may open.
pub const POOL_MAX: &str = "wms_db_pool_max_connections";
/// Tasks waiting for a connection, by `pool`.
pub const POOL_WAITING: &str = "wms_db_pool_waiting";
/// 1 when the last scrape could read the queues, else 0.
pub const SCRAPE_OK: &str = "wms_metrics_database_up";

/// Latency buckets in seconds: from a cached read (~1 ms) to the database's wait bound and past.
const BUCKETS: [f64; 14] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The process's recorder, installed on first use: from then on the series are kept.
pub fn recorder() -> PrometheusHandle {
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new();
            let builder = builder
                .set_buckets_for_metric(
                    Matcher::Full(adapters_http::middleware::request_metrics::DURATION.into()),
                    &BUCKETS,
                )
                .unwrap_or_else(|_| PrometheusBuilder::new());
            let recorder = builder.build_recorder();
            let handle = recorder.handle();
            if let Err(e) = metrics::set_global_recorder(recorder) {
                tracing::warn!(error = %e, "another metrics recorder is installed: /metrics stays empty");
            }
            describe();
            handle
        })
        .clone()
}

fn describe() {
    adapters_http::middleware::request_metrics::describe();
    metrics::describe_counter!(
        adapters_postgres::webhooks::DELIVERIES,
        "Webhook delivery attempts, by what they left the delivery as (succeeded, retrying, failed, paused)."
    );
    metrics::describe_counter!(
        adapters_postgres::connectors::SENDS,
        "Sends to a messaging platform, by channel type and outcome (sent, failed, retrying, paused)."
    );
    metrics::describe_counter!(
        adapters_postgres::mail::SENDS,
        "E-mail send attempts, by what they left the mail as (sent, retrying, failed)."
    );
    metrics::describe_gauge!(
        QUEUE_DEPTH,
        "Items waiting or in flight, by queue (webhooks, connectors, mail), all instances."
    );
    metrics::describe_gauge!(
        QUEUE_OLDEST,
        metrics::Unit::Seconds,
        "How long the item due longest has waited since it fell due, by queue."
    );
    metrics::describe_gauge!(POOL_CONNECTIONS, "This instance's pooled database connections, by pool and state.");
    metrics::describe_gauge!(POOL_MAX, "The most connections this instance's pools may open, by pool.");
    metrics::describe_gauge!(POOL_WAITING, "Requests of this instance waiting for a database connection, by pool.");
    metrics::describe_gauge!(SCRAPE_OK, "1 when the scrape could read the queues from the database, else 0.");
}

struct Scrape {
    handle: PrometheusHandle,
    db: Db,
}

/// Serves `GET /metrics` on `listener`, on one worker of its own (a scrape never waits behind the
/// API's requests, nor they behind it). Installs the recorder; ignores signals like the API's
/// server (the caller stops it).
///
/// # Errors
/// When the listener cannot be used.
pub fn server(db: &Db, listener: TcpListener) -> std::io::Result<Server> {
    let handle = recorder();
    // Histograms keep their samples until upkeep folds them into the buckets.
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        loop {
            tick.tick().await;
            upkeep.run_upkeep();
        }
    });
    let data = web::Data::new(Scrape { handle, db: db.clone() });
    let server = HttpServer::new(move || App::new().app_data(data.clone()).route("/metrics", web::get().to(scrape)))
        .workers(1)
        .disable_signals()
        .listen(listener)?;
    Ok(server.run())
}

async fn scrape(data: web::Data<Scrape>) -> HttpResponse {
    refresh(&data.db).await;
    HttpResponse::Ok().content_type("text/plain; version=0.0.4; charset=utf-8").body(data.handle.render())
}

/// Sets the gauges read at scrape time.
async fn refresh(db: &Db) {
    let usage = db.usage();
    let pool = "primary";
    metrics::gauge!(POOL_CONNECTIONS, "pool" => pool, "state" => "in_use")
        .set(usage.open.saturating_sub(usage.idle) as f64);
    metrics::gauge!(POOL_CONNECTIONS, "pool" => pool, "state" => "idle").set(usage.idle as f64);
    metrics::gauge!(POOL_MAX, "pool" => pool).set(usage.max as f64);
    metrics::gauge!(POOL_WAITING, "pool" => pool).set(usage.waiting as f64);
    match adapters_postgres::queue_stats::queue_stats(db).await {
        Ok(stats) => {
            for s in stats {
                metrics::gauge!(QUEUE_DEPTH, "queue" => s.queue.clone()).set(s.depth as f64);
                metrics::gauge!(QUEUE_OLDEST, "queue" => s.queue).set(s.oldest_age_secs);
            }
            metrics::gauge!(SCRAPE_OK).set(1.0);
        }
        Err(e) => {
            tracing::warn!(error = %e, "metrics: the queues could not be read");
            metrics::gauge!(SCRAPE_OK).set(0.0);
        }
    }
}
