//! Webhook delivery benchmark (run by `scripts/bench-webhooks`, release build).
//!
//! 1. Throughput: a backlog of events is committed at once for 10 destinations on one local
//!    receiver, while 1 (then 2) `wms serve` instances run; deliveries per second = deliveries /
//!    time from the commit to the last arrival.
//! 2. Latency: events are committed one per transaction at a steady 200 per second for one
//!    destination; for each, the time from its commit to its arrival at the receiver.
//! 3. Rate cap (with RATE_CAP_EVENTS > 0): a backlog committed at once for one destination with
//!    `rate_limit_per_second: 50`, one instance; the rate at which it arrives, from its first
//!    arrival and from 1 s after it (past the limiter's first burst).
//!
//! Usage: bench_webhooks WMS_BINARY [BACKLOG_EVENTS] [LATENCY_SECONDS] [RATE_CAP_EVENTS (default 0)]

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use adapters_postgres::webhooks::outbox;
use adapters_postgres::Db;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use domain::webhooks::samples::sample_event;
use domain::webhooks::{DestinationId, DestinationInput, DomainEvent, EventType};
use domain::workspace::{CreateWorkspace, PlanTier, WorkspaceId};

type Arrivals = Arc<Mutex<HashMap<i64, Instant>>>;

/// Requests received, and when the last one arrived.
static REQUESTS: AtomicUsize = AtomicUsize::new(0);
static LAST: Mutex<Option<Instant>> = Mutex::new(None);
/// Arrival times at the rate-capped destination.
static CAPPED: Mutex<Vec<Instant>> = Mutex::new(Vec::new());
/// The cap the rate phase sets.
const RATE_CAP: u32 = 50;

async fn receive(req: HttpRequest, body: web::Bytes, arrivals: web::Data<Arrivals>) -> HttpResponse {
    let now = Instant::now();
    if req.path() == "/latency" {
        if let Some(seq) =
            serde_json::from_slice::<serde_json::Value>(&body).ok().and_then(|v| v["data"]["id"].as_i64())
        {
            arrivals.lock().map(|mut a| *a.entry(seq).or_insert(now)).ok();
        }
    }
    if req.path() == "/capped" {
        CAPPED.lock().map(|mut c| c.push(now)).ok();
    }
    if let Ok(mut l) = LAST.lock() {
        *l = Some(now);
    }
    REQUESTS.fetch_add(1, Ordering::SeqCst);
    HttpResponse::NoContent().finish()
}

fn serve(wms: &str, url: &str, key: &str) -> Child {
    Command::new(wms)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("DATABASE_URL", url)
        .env("WMS__SECRETS__ENCRYPTION_KEY", key)
        .env("WMS__WEBHOOKS__ALLOWED_SUBNETS", "127.0.0.0/8")
        .env("WMS__LOG__LEVEL", "warn")
        .env("WMS__HTTP__WORKERS", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start wms serve")
}

async fn wait_for_requests(n: usize, patience: Duration) -> Instant {
    let deadline = Instant::now() + patience;
    while REQUESTS.load(Ordering::SeqCst) < n {
        assert!(Instant::now() < deadline, "only {} of {n} deliveries arrived", REQUESTS.load(Ordering::SeqCst));
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    LAST.lock().ok().and_then(|l| *l).unwrap_or_else(Instant::now)
}

/// SIGTERM, so the instance records what it sent before the next phase starts.
fn stop(child: &mut Child) {
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let _ = child.wait();
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let wms = args.get(1).cloned().unwrap_or_else(|| "target/release/wms".into());
    let backlog: i64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let latency_secs: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(20);
    let capped_events: i64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(0);

    let database = test_db::TestDatabase::new().await?;
    let mut settings = app::config::Settings::defaults()?;
    settings.database.url = Some(database.url.clone());
    settings.webhooks.allowed_subnets = Some("127.0.0.0/8".into());
    let db = Db::new(&database.url, 8, Duration::from_secs(5))?;
    app::secrets::resolve_key(&mut settings, &db, false).await?;
    let key = settings.secrets.encryption_key.clone().unwrap_or_default();

    let arrivals: Arrivals = Arc::new(Mutex::new(HashMap::new()));
    let data = web::Data::new(arrivals.clone());
    let server = HttpServer::new(move || App::new().app_data(data.clone()).default_service(web::to(receive)))
        .workers(1)
        .bind("127.0.0.1:0")?;
    let port = server.addrs()[0].port();
    tokio::spawn(server.run());

    let service = app::webhooks::service(&settings, &db);
    let workspaces = app::wiring::workspace_service(&db);
    let new_ws = |name: &str| CreateWorkspace {
        name: name.into(),
        plan: PlanTier::Advanced,
        admin_email: format!("{}@bench.wms.test", name.to_lowercase().replace(' ', "-")),
        admin_password: "benchmark password".into(),
        admin_name: None,
    };
    let throughput_ws = workspaces.create(new_ws("Throughput")).await?.workspace_id;
    let latency_ws = workspaces.create(new_ws("Latency")).await?.workspace_id;
    const DESTS: i64 = 10;
    for d in 0..DESTS {
        let input = DestinationInput {
            url: format!("http://127.0.0.1:{port}/d{d}"),
            platform: Some("bench".into()),
            events: vec!["message.created".into()],
            active: Some(true),
            controls: Default::default(),
        };
        let _ = service
            .create(throughput_ws, &domain::audit::AuditContext::cli(), input)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    service
        .create(
            latency_ws,
            &domain::audit::AuditContext::cli(),
            DestinationInput {
                url: format!("http://127.0.0.1:{port}/latency"),
                platform: None,
                events: vec!["message.created".into()],
                active: Some(true),
                controls: Default::default(),
            },
        )
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;

    println!("# webhook delivery benchmark");
    for instances in [1usize, 2] {
        REQUESTS.store(0, Ordering::SeqCst);
        let mut children: Vec<Child> = (0..instances).map(|_| serve(&wms, &database.url, &key)).collect();
        tokio::time::sleep(Duration::from_secs(2)).await;
        // The whole backlog in one transaction: its commit is time zero.
        let mut conn = db.conn().await?;
        let ws = throughput_ws;
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                for seq in 0..backlog {
                    outbox::record(conn, ws, time::OffsetDateTime::now_utc(), &[message(seq)]).await?;
                }
                Ok(())
            }
            .scope_boxed()
        })
        .await?;
        let committed = Instant::now();
        let total = usize::try_from(backlog)? * usize::try_from(DESTS)?;
        let last = wait_for_requests(total, Duration::from_secs(300)).await;
        let secs = (last - committed).as_secs_f64();
        println!(
            "throughput, {instances} instance(s): {total} deliveries in {secs:.2} s = {:.0} deliveries/s",
            total as f64 / secs
        );
        for c in &mut children {
            stop(c);
        }
    }

    // Latency at a steady 200 events per second, one instance.
    arrivals.lock().expect("lock").clear();
    let mut child = serve(&wms, &database.url, &key);
    let result = steady(&db, latency_ws, latency_secs, &arrivals).await;
    stop(&mut child);
    result?;
    #[derive(diesel::QueryableByName, Debug)]
    struct Failure {
        #[diesel(sql_type = diesel::sql_types::Text)]
        what: String,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let failures: Vec<Failure> = diesel_async::RunQueryDsl::load(
        diesel::sql_query(
            "SELECT coalesce(error, status_code::text) AS what, count(*) AS n FROM webhook_attempts
             WHERE status_code IS NULL OR status_code NOT BETWEEN 200 AND 299 GROUP BY 1 ORDER BY 2 DESC",
        ),
        &mut db.conn().await?,
    )
    .await?;
    for f in failures {
        println!("failed attempts: {} x {}", f.n, f.what);
    }
    if capped_events > 0 {
        let ws = workspaces.create(new_ws("Rate cap")).await?.workspace_id;
        let input = DestinationInput {
            url: format!("http://127.0.0.1:{port}/capped"),
            platform: None,
            events: vec!["message.created".into()],
            active: Some(true),
            controls: domain::webhooks::ControlsInput {
                rate_limit_per_second: Some(Some(i64::from(RATE_CAP))),
                ..Default::default()
            },
        };
        service.create(ws, &domain::audit::AuditContext::cli(), input).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        rate_cap(&wms, &database.url, &key, &db, ws, capped_events).await?;
    }
    Ok(())
}

/// Phase 3: the arrival rate of a backlog at a destination capped at [`RATE_CAP`] per second.
async fn rate_cap(wms: &str, url: &str, key: &str, db: &Db, ws: WorkspaceId, events: i64) -> anyhow::Result<()> {
    let mut child = serve(wms, url, key);
    let arrived = capped_arrivals(db, ws, events).await;
    stop(&mut child);
    let got = arrived?;
    let (Some(first), Some(last)) = (got.first().copied(), got.last().copied()) else {
        anyhow::bail!("nothing arrived at the capped destination");
    };
    let rate = |from: Instant| {
        let after: Vec<&Instant> = got.iter().filter(|t| **t >= from).collect();
        let span = last.saturating_duration_since(from).as_secs_f64();
        (after.len().saturating_sub(1)) as f64 / span.max(f64::EPSILON)
    };
    println!(
        "rate cap {RATE_CAP}/s: {} of {events} events arrived over {:.1} s: {:.1}/s from the first, {:.1}/s from 1 s after it",
        got.len(),
        last.saturating_duration_since(first).as_secs_f64(),
        rate(first),
        rate(first + Duration::from_secs(1)),
    );
    Ok(())
}

/// Commits `events` at once and waits for them at the capped destination; their arrival times.
async fn capped_arrivals(db: &Db, ws: WorkspaceId, events: i64) -> anyhow::Result<Vec<Instant>> {
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut conn = db.conn().await?;
    conn.transaction::<_, diesel::result::Error, _>(|conn| {
        async move {
            for seq in 0..events {
                outbox::record(conn, ws, time::OffsetDateTime::now_utc(), &[message(seq)]).await?;
            }
            Ok(())
        }
        .scope_boxed()
    })
    .await?;
    let n = usize::try_from(events)?;
    let deadline = Instant::now() + Duration::from_secs(u64::try_from(events)? / u64::from(RATE_CAP) * 3 + 30);
    while CAPPED.lock().map(|c| c.len()).unwrap_or(0) < n && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(CAPPED.lock().map(|c| c.clone()).unwrap_or_default())
}

/// Commits events one per transaction at 200/s and prints commit-to-arrival percentiles.
async fn steady(db: &Db, ws: WorkspaceId, secs: u64, arrivals: &Arrivals) -> anyhow::Result<()> {
    tokio::time::sleep(Duration::from_secs(2)).await;
    let events = i64::try_from(secs * 200)?;
    let mut commits: HashMap<i64, Instant> = HashMap::new();
    let start = Instant::now();
    let mut conn = db.conn().await?;
    for seq in 0..events {
        let due = start + Duration::from_micros(u64::try_from(seq)? * 5000);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            tokio::time::sleep(wait).await;
        }
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move { outbox::record(conn, ws, time::OffsetDateTime::now_utc(), &[message(seq)]).await }
                .scope_boxed()
        })
        .await?;
        commits.insert(seq, Instant::now());
    }
    let rate = events as f64 / start.elapsed().as_secs_f64();
    let deadline = Instant::now() + Duration::from_secs(60);
    while arrivals.lock().map(|a| a.len()).unwrap_or(0) < commits.len() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let a = arrivals.lock().expect("lock").clone();
    let mut lat: Vec<f64> = commits
        .iter()
        .filter_map(|(k, c)| a.get(k).map(|r| r.saturating_duration_since(*c).as_secs_f64() * 1000.0))
        .collect();
    lat.sort_by(f64::total_cmp);
    println!(
        "latency at {rate:.0} events/s ({} events, 1 instance): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        lat.len(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        lat.last().copied().unwrap_or(0.0)
    );
    Ok(())
}

/// A `message.created` whose message id is `seq` (how the receiver tells the events apart).
fn message(seq: i64) -> DomainEvent {
    let sample = sample_event(EventType::MessageCreated, DestinationId(0), time::OffsetDateTime::now_utc());
    match sample {
        Some(DomainEvent::MessageCreated(m)) => {
            DomainEvent::MessageCreated(domain::messaging::MessageRecord { id: seq, ..m })
        }
        _ => unreachable!("the sample of message.created is a message"),
    }
}
