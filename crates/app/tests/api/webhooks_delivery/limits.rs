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

/// The recorder writing a batch's results and the heartbeat renewing the same leases, at once and
/// over and over: the batch comes in an order opposite to the leases' (id order), which is how
/// the two once waited on each other's rows ("deadlock detected"). Every write goes through.
#[tokio::test]
async fn recording_and_renewing_the_same_leases_at_once_never_deadlock() {
    use domain::webhooks::pace::PaceSignal;
    use domain::webhooks::{
        AttemptRecord, AttemptTrigger, DeliveryId, DeliveryQueue, DeliveryStatus, DestinationEffect,
    };

    const N: i64 = 400;
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let (dest, _) = destination(&app, &key, &receiver.url("/"), &["message.created"]).await;
    let events: Vec<DomainEvent> = (0..N).map(|i| event_of(EventType::MessageCreated, &json!({"id": i}))).collect();
    let mut conn = app.db.conn().await.expect("conn");
    adapters_postgres::webhooks::outbox::record(&mut conn, WorkspaceId(ws.id), OffsetDateTime::now_utc(), &events)
        .await
        .expect("record");
    // Leased to this worker, as a claim leaves them.
    #[derive(diesel::QueryableByName)]
    struct Id {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        id: i64,
    }
    let ids: Vec<i64> = diesel::sql_query(
        "UPDATE webhook_deliveries SET status = 'sending', next_attempt_at = now() + interval '1 minute'
         WHERE destination_id = $1 RETURNING id",
    )
    .bind::<diesel::sql_types::BigInt, _>(dest)
    .load::<Id>(&mut conn)
    .await
    .expect("lease")
    .into_iter()
    .map(|r| r.id)
    .collect();
    assert_eq!(ids.len() as i64, N);
    let mut leases: Vec<DeliveryId> = ids.iter().copied().map(DeliveryId).collect();
    leases.sort_by_key(|d| d.0);
    let queue = adapters_postgres::webhooks::PgDeliveryQueue::new(app.db.clone());
    let policy = app::webhooks::delivery_policy(&app.settings);
    for round in 1..=30 {
        let now = OffsetDateTime::now_utc();
        // The recorder's batch, newest first; each result keeps its delivery leased.
        let records: Vec<AttemptRecord> = leases
            .iter()
            .rev()
            .map(|d| AttemptRecord {
                delivery_id: *d,
                workspace_id: WorkspaceId(ws.id),
                destination_id: DestinationId(dest),
                attempt_number: round,
                trigger: AttemptTrigger::Scheduled,
                attempted_at: now,
                status_code: Some(204),
                error: None,
                duration_ms: 1,
                response_excerpt: String::new(),
                next_attempt_at: Some(now + time::Duration::minutes(1)),
                status: DeliveryStatus::Sending,
                effect: DestinationEffect::Healthy,
                pace: PaceSignal::Neutral,
            })
            .collect();
        let until = now + time::Duration::minutes(2);
        let (recorded, renewed, renewed_again) = tokio::join!(
            queue.record(&records, policy.auto_disable_after, policy.limits.bounds()),
            queue.renew(&leases, until),
            async {
                tokio::time::sleep(Duration::from_millis(u64::from(round.unsigned_abs() % 5))).await;
                queue.renew(&leases, until + time::Duration::seconds(1)).await
            },
        );
        recorded.unwrap_or_else(|e| panic!("round {round}: recording: {}", e.0));
        renewed.unwrap_or_else(|e| panic!("round {round}: renewing: {}", e.0));
        renewed_again.unwrap_or_else(|e| panic!("round {round}: renewing: {}", e.0));
    }
}
