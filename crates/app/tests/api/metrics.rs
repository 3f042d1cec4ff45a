//! `metrics.bind`: `GET /metrics` on its own listener, in the Prometheus text format, parsed by a
//! Prometheus text parser; the series move with the traffic sent.

use std::net::TcpListener;

use prometheus_parse::{Sample, Scrape, Value};

use crate::credentials::channels;
use crate::helpers::TestApp;

/// A server that keeps metrics, and the address of its `/metrics`.
async fn measured(adjust: impl FnOnce(&mut app::config::Settings)) -> (TestApp, String) {
    let app = TestApp::spawn_with(|s| {
        s.metrics.bind = Some("127.0.0.1:0".into());
        adjust(s);
    })
    .await;
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(app::prometheus::server(&app.db, listener).expect("metrics server"));
    (app, format!("http://127.0.0.1:{port}/metrics"))
}

async fn scrape(app: &TestApp, url: &str) -> Vec<Sample> {
    let res = app.client.get(url).send().await.expect("scrape");
    assert_eq!(res.status(), 200);
    let ct = res.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert!(ct.starts_with("text/plain; version=0.0.4"), "{ct}");
    let text = res.text().await.expect("body");
    Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("Prometheus text format").samples
}

/// The value of the sample `metric` whose labels include `labels` (0 when there is none).
fn value(samples: &[Sample], metric: &str, labels: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|s| s.metric == metric && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .map(|s| match &s.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
            // A histogram's count: its +Inf bucket.
            Value::Histogram(b) => b.iter().find(|b| b.less_than.is_infinite()).map_or(0.0, |b| b.count),
            Value::Summary(_) => 0.0,
        })
        .sum()
}

#[tokio::test]
async fn requests_are_counted_by_route_pattern_and_status_with_their_latency() {
    let (app, metrics) = measured(|_| {}).await;
    let (_, key) = app.advanced_with_key().await;
    let before = scrape(&app, &metrics).await;
    let ok = [("route", "/v1/channels"), ("method", "GET"), ("status", "200")];
    let by_id = [("route", "/v1/channels/:channel_id"), ("method", "GET"), ("status", "404")];
    let count = |s: &[Sample], l: &[(&str, &str)]| value(s, "wms_http_requests_total", l);

    for _ in 0..3 {
        assert_eq!(channels(&app, &key).await.status(), 200);
    }
    for id in [987_654, 987_655] {
        let res = app.authed(reqwest::Method::GET, &format!("/v1/channels/{id}"), &key).send().await.expect("request");
        assert_eq!(res.status(), 404);
    }
    assert_eq!(app.get("/no/such/page/at/all").await.status(), 404);

    let after = scrape(&app, &metrics).await;
    assert_eq!(count(&after, &ok) - count(&before, &ok), 3.0);
    // Two different ids, one series: the route's pattern, never the raw path.
    let routes: Vec<String> = after
        .iter()
        .filter(|s| s.metric == "wms_http_requests_total")
        .map(|s| format!("{:?} {:?} {:?}", s.labels.get("route"), s.labels.get("status"), s.value))
        .collect();
    assert_eq!(count(&after, &by_id) - count(&before, &by_id), 2.0, "{routes:?}");
    assert!(after.iter().all(|s| !s.labels.values().any(|v| v.contains("987654") || v.contains("no/such"))));
    assert_eq!(count(&after, &[("route", "unmatched"), ("status", "404")]), 1.0);
    // Latency: one histogram observation per request, in the declared buckets.
    let latency =
        |s: &[Sample]| value(s, "wms_http_request_duration_seconds", &[("route", "/v1/channels"), ("method", "GET")]);
    assert_eq!(latency(&after) - latency(&before), 3.0);
    let buckets = after
        .iter()
        .find_map(|s| match &s.value {
            Value::Histogram(b) if s.metric == "wms_http_request_duration_seconds" => Some(b.len()),
            _ => None,
        })
        .expect("a latency histogram");
    assert!(buckets >= 10, "{buckets} buckets");
}

#[tokio::test]
async fn rate_limit_outcomes_pools_and_queues_are_reported() {
    let (app, metrics) = measured(|s| s.rate_limit.requests_per_hour = 3).await;
    let (_, key) = app.advanced_with_key().await;
    for _ in 0..5 {
        channels(&app, &key).await;
    }
    let after = scrape(&app, &metrics).await;
    let decisions =
        |outcome| value(&after, "wms_rate_limit_decisions_total", &[("limit", "requests"), ("outcome", outcome)]);
    assert_eq!((decisions("allowed"), decisions("limited")), (3.0, 2.0));
    assert_eq!(value(&after, "wms_http_requests_total", &[("route", "/v1/channels"), ("status", "429")]), 2.0);

    // Pool and queue gauges, read at scrape time.
    // The shared pool and the one HTTP worker's pool, 4 connections each.
    assert_eq!(value(&after, "wms_db_pool_max_connections", &[("pool", "primary")]), 8.0);
    assert!(after.iter().any(|s| s.metric == "wms_db_pool_connections"));
    assert_eq!(value(&after, "wms_metrics_database_up", &[]), 1.0);
    assert_eq!(value(&after, "wms_queue_depth", &[("queue", "webhooks")]), 0.0);
    assert!(after.iter().any(|s| s.metric == "wms_queue_depth" && s.labels.get("queue") == Some("connectors")));
    assert!(after.iter().any(|s| s.metric == "wms_queue_oldest_due_age_seconds"));
}
