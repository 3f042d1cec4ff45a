//! Per-destination limits across workers: in-flight deliveries and rate, also behind PgBouncer.

use super::*;

fn three_in_flight(s: &mut app::config::Settings) {
    loopback(s);
    s.webhooks.max_in_flight_per_destination = 3;
    s.webhooks.workers = 2;
    s.webhooks.poll_interval_ms = 20;
}

#[tokio::test]
async fn per_destination_concurrency_limit_is_enforced_across_workers() {
    let app = TestApp::spawn_with(three_in_flight).await;
    once_each_across_workers(&app).await;
}

/// The same through PgBouncer in transaction pooling (`test_db::pgbouncer`), and no event is
/// delivered twice.
#[tokio::test]
async fn behind_pgbouncer_each_event_is_delivered_exactly_once_across_workers() {
    let app = TestApp::spawn_behind_pgbouncer(6, three_in_flight).await;
    let receiver = once_each_across_workers(&app).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ids: std::collections::HashSet<String> =
        receiver.received().iter().map(|r| r.header("webhook-id").to_owned()).collect();
    assert_eq!((receiver.received().len(), ids.len()), (15, 15), "no duplicate");
    app.assert_transaction_pooling(6);
}

async fn once_each_across_workers(app: &TestApp) -> Receiver {
    let receiver = Receiver::start().await;
    receiver.answer_always(Answer { delay: Duration::from_millis(150), ..Answer::status(204) });
    let (ws, key) = app.advanced_with_key().await;
    destination(app, &key, &receiver.url("/"), &["message.created"]).await;
    for i in 0..15 {
        emit(app, ws.id, EventType::MessageCreated, json!({"id": i})).await;
    }
    // Two instances' worth of workers on the same database.
    let a = app::webhooks::start(
        &app.settings,
        app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
    );
    let b = app::webhooks::start(
        &app.settings,
        app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
    );
    let got = receiver.wait_for(15, Duration::from_secs(20)).await;
    a.stop(Duration::from_secs(5)).await;
    b.stop(Duration::from_secs(5)).await;
    assert_eq!(got.len(), 15, "each event exactly once");
    assert!(receiver.max_concurrent() <= 3, "at most 3 in flight, saw {}", receiver.max_concurrent());
    assert!(receiver.max_concurrent() >= 2, "but in parallel");
    receiver
}

#[tokio::test]
async fn per_destination_rate_limit_is_enforced() {
    let app = TestApp::spawn_with(|s| {
        loopback(s);
        s.webhooks.rate_per_destination = 10.0;
        s.webhooks.poll_interval_ms = 10;
    })
    .await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    destination(&app, &key, &receiver.url("/"), &["message.created"]).await;
    for i in 0..25 {
        emit(&app, ws.id, EventType::MessageCreated, json!({"id": i})).await;
    }
    let w = app::webhooks::start(
        &app.settings,
        app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
    );
    let got = receiver.wait_for(25, Duration::from_secs(20)).await;
    w.stop(Duration::from_secs(5)).await;
    // A burst of 10, then 10 per second: the 25th no sooner than ~1.5 s after the first.
    let span = got[24].at - got[0].at;
    assert!(span >= Duration::from_millis(1300), "25 deliveries in {span:?}");
}

/// The recent-sends migration on a database filled before it: a throttle keeps its bucket and
/// its pace, and starts with no recent sends.
#[tokio::test]
async fn throttles_from_before_the_recent_sends_keep_their_bucket_and_pace() {
    use diesel::sql_types::{Double, Integer};
    use diesel_async::RunQueryDsl;

    #[derive(diesel::QueryableByName, Debug, PartialEq)]
    struct Row {
        #[diesel(sql_type = Double)]
        tokens: f64,
        #[diesel(sql_type = diesel::sql_types::Nullable<Double>)]
        rate: Option<f64>,
        #[diesel(sql_type = Integer)]
        recent: i32,
        #[diesel(sql_type = Integer)]
        sent: i32,
    }
    let (database, _db, mut conn) = crate::helpers::filled_before(
        "20261204000101",
        &[
            "INSERT INTO workspaces (name, slug, plan) VALUES ('Old', 'old', 'advanced')",
            "INSERT INTO webhook_destinations (workspace_id, url, platform, events, active, secret_encrypted)
             SELECT id, 'https://hooks.example.com/', 'generic', ARRAY['message.created'], true, '\\x00' FROM workspaces",
            "INSERT INTO webhook_throttles (destination_id, tokens, refilled_at, rate)
             SELECT id, 1.5, now(), 40 FROM webhook_destinations",
        ],
    )
    .await;
    adapters_postgres::migrate::run_pending(&database.url).await.expect("migrate");
    let got: Row = diesel::sql_query(
        "SELECT tokens, rate, cardinality(recent_at) AS recent, cardinality(recent_sent) AS sent FROM webhook_throttles",
    )
    .get_result(&mut conn)
    .await
    .expect("throttle");
    assert_eq!(got, Row { tokens: 1.5, rate: Some(40.0), recent: 0, sent: 0 });
    let bad = diesel::sql_query("UPDATE webhook_throttles SET recent_at = ARRAY[now()]").execute(&mut conn).await;
    assert!(bad.is_err(), "a time without its count is refused");
}

/// Right after a bulk enqueue, before the table's statistics catch up (they still say nothing is
/// due), a claim reads each destination's due deliveries once, not once per due delivery: the
/// plan that did the latter took 19 s a claim at 20,000 due deliveries and stalled deliveries for
/// a minute. Counted with the index's own scan counter, not timed.
#[tokio::test]
async fn a_claim_right_after_a_bulk_enqueue_reads_each_destination_once() {
    use diesel::sql_types::BigInt;
    use diesel_async::RunQueryDsl;

    #[derive(diesel::QueryableByName)]
    struct Scans {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    for _ in 0..10 {
        destination(&app, &key, &receiver.url("/"), &["contact.created"]).await;
    }
    let mut conn = app.db.conn().await.expect("conn");
    let run = |sql: String| diesel::sql_query(sql);
    run("ALTER TABLE webhook_deliveries SET (autovacuum_enabled = false)".into())
        .execute(&mut conn)
        .await
        .expect("sql");
    run(format!(
        "INSERT INTO webhook_events (workspace_id, event_type, message_id, payload)
         SELECT {ws}, 'contact.created', 'msg_' || g, '{{}}' FROM generate_series(1, 2000) g",
        ws = ws.id
    ))
    .execute(&mut conn)
    .await
    .expect("events");
    // Statistics taken while everything was delivered...
    let deliveries = |status: &str| {
        format!(
            "INSERT INTO webhook_deliveries (workspace_id, destination_id, event_id, status, next_attempt_at)
             SELECT e.workspace_id, d.id, e.id, '{status}', now() - interval '1 minute'
             FROM webhook_events e, webhook_destinations d WHERE e.workspace_id = {ws} AND d.workspace_id = {ws}",
            ws = ws.id
        )
    };
    run(deliveries("succeeded")).execute(&mut conn).await.expect("delivered");
    run("ANALYZE webhook_deliveries".into()).execute(&mut conn).await.expect("analyze");
    // ...then a backlog of 20,000 in one go.
    run(deliveries("pending")).execute(&mut conn).await.expect("backlog");
    let scans = "SELECT coalesce(sum(idx_scan), 0)::bigint AS n FROM pg_stat_user_indexes
                 WHERE relname = 'webhook_deliveries'";
    let before = run(scans.into()).get_result::<Scans>(&mut conn).await.expect("scans").n;
    let engine = engine(&app, &TestClock::new());
    let limits = engine.policy.limits;
    let claimed = engine.queue.claim_due(engine.clock.now(), 100, limits).await.expect("claim").deliveries;
    assert_eq!(claimed.len(), 100);
    // An idle backend reports its counters within about ten seconds.
    let mut after = before;
    for _ in 0..80 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        run("SELECT pg_stat_clear_snapshot()".into()).execute(&mut conn).await.expect("snapshot");
        after = run(scans.into()).get_result::<Scans>(&mut conn).await.expect("scans").n;
        if after > before {
            break;
        }
    }
    assert!(after > before, "the claim's scans were counted: {before} then {after}");
    assert!(after - before < 1_000, "{} index scans of the deliveries for one claim", after - before);
}
