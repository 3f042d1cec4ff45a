//! One destination's backlog never delays another destination's deliveries: what its limits hold
//! back (its in-flight cap, a `Retry-After` hold) stays due, however much of it there is, and
//! takes no room from the claims of the others.

use std::time::Instant;

use super::*;

/// Events queued at once for workspace A's ten destinations: 2,100 deliveries due, more than the
/// oldest due ones a claim reads to find destinations with work (1,000), so B's destination must
/// be found behind them.
const BACKLOG: usize = 210;

/// Workspace A: ten destinations on `url` subscribed to `message.created` with
/// `max_in_flight: 1`, and [`BACKLOG`] events queued for each; their ids.
async fn workspace_with_a_backlog(app: &TestApp, url: &str) -> Vec<i64> {
    let (ws, key) = app.advanced_with_key().await;
    let mut ids = Vec::new();
    for _ in 0..10 {
        let body = json!({"url": url, "events": ["message.created"], "max_in_flight": 1});
        let res = app.post_json("/v1/webhooks", &key, &body).await;
        assert_eq!(res.status(), 201, "create destination");
        ids.push(res.json::<Value>().await.expect("json")["id"].as_i64().expect("id"));
    }
    let events: Vec<DomainEvent> =
        (0..BACKLOG).map(|i| event_of(EventType::MessageCreated, &json!({"id": i}))).collect();
    let mut conn = app.db.conn().await.expect("conn");
    adapters_postgres::webhooks::outbox::record(&mut conn, WorkspaceId(ws.id), OffsetDateTime::now_utc(), &events)
        .await
        .expect("record");
    ids
}

/// Workspace B creates a channel; its destination's receiver must get `channel.created` within
/// 2 s, although all of A's deliveries are older.
async fn another_workspace_is_delivered_to_at_once(app: &TestApp) {
    let fast = Receiver::start().await;
    let (_, key) = app.advanced_with_key().await;
    destination(app, &key, &fast.url("/b"), &["channel.created"]).await;
    let created = Instant::now();
    app.channel(&key, "whatsapp", "+14155550123", "active").await;
    let got = fast.wait_for(1, Duration::from_secs(2)).await;
    assert_eq!(got[0].json()["type"], "channel.created", "after {:?}", created.elapsed());
}

fn workers(app: &TestApp) -> app::webhooks::Workers {
    app::webhooks::start(
        &app.settings,
        app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
    )
}

#[tokio::test]
async fn a_backlog_held_at_its_in_flight_cap_does_not_delay_another_workspace() {
    let app = TestApp::spawn_with(loopback).await;
    let slow = Receiver::start().await;
    slow.answer_always(Answer { delay: Duration::from_secs(4), ..Answer::status(204) });
    workspace_with_a_backlog(&app, &slow.url("/a")).await;
    let workers = workers(&app);
    // Each of A's destinations has its one delivery in flight; the other 2,090 stay due.
    slow.wait_for(10, Duration::from_secs(5)).await;

    another_workspace_is_delivered_to_at_once(&app).await;

    assert_eq!(slow.received().len(), 10, "A's destinations kept to one at a time");
    workers.stop(Duration::from_secs(6)).await;
}

#[tokio::test]
async fn a_backlog_held_by_retry_after_does_not_delay_another_workspace() {
    let app = TestApp::spawn_with(loopback).await;
    let held = Receiver::start().await;
    let ids = workspace_with_a_backlog(&app, &held.url("/a")).await;
    // As the recorder leaves a destination whose receiver answered 429 with `Retry-After`.
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query(
        "INSERT INTO webhook_throttles (destination_id, tokens, refilled_at, concurrency, rate, hold_until)
         SELECT id, 1, now(), 1, 1, now() + interval '5 minutes' FROM unnest($1::bigint[]) AS u(id)",
    )
    .bind::<diesel::sql_types::Array<diesel::sql_types::BigInt>, _>(&ids)
    .execute(&mut conn)
    .await
    .expect("hold");
    let workers = workers(&app);

    another_workspace_is_delivered_to_at_once(&app).await;

    assert!(held.received().is_empty(), "A's destinations are held");
    workers.stop(Duration::from_secs(5)).await;
}
