//! Delivery against a real local receiver: events from the outbox, signing, the retry schedule
//! (with a clock the test moves, no sleeping), Retry-After, 410, auto-deactivation, manual retry,
//! test events, the connect-time SSRF check and the per-destination concurrency limit.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use app::config::Settings;
use diesel_async::RunQueryDsl;
use domain::common::ports::Clock;
use domain::webhooks::delivery::DeliveryEngine;
use domain::webhooks::samples::sample_event;
use domain::webhooks::signing::SigningSecret;
use domain::webhooks::{DestinationId, DomainEvent, EventType};
use domain::workspace::WorkspaceId;
use reqwest::Method;
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::helpers::TestApp;
use crate::webhooks_receiver::{Answer, Receiver};

mod fairness;
mod limits;

/// A clock the test moves by hand.
#[derive(Clone)]
pub struct TestClock(Arc<Mutex<OffsetDateTime>>);

impl TestClock {
    /// A few seconds ahead of the real time, so events recorded by the test just now are due.
    pub fn new() -> Self {
        Self(Arc::new(Mutex::new(OffsetDateTime::now_utc() + time::Duration::seconds(5))))
    }
    pub fn advance(&self, by: time::Duration) {
        *self.0.lock().expect("lock") += by;
    }
}

impl Clock for TestClock {
    fn now(&self) -> OffsetDateTime {
        *self.0.lock().expect("lock")
    }
}

pub fn loopback(s: &mut Settings) {
    s.webhooks.allowed_subnets = Some("127.0.0.0/8,::1/128".into());
}

/// [`loopback`], and one delivery in flight per destination: arrival order is delivery order.
pub fn one_at_a_time(s: &mut Settings) {
    loopback(s);
    s.webhooks.max_in_flight_per_destination = 1;
}

/// A destination of `key`'s workspace on `url`; returns its id and secret.
pub async fn destination(app: &TestApp, key: &str, url: &str, events: &[&str]) -> (i64, String) {
    let res = app.post_json("/v1/webhooks", key, &json!({"url": url, "events": events})).await;
    assert_eq!(res.status(), 201, "create destination");
    let d: Value = res.json().await.expect("json");
    (d["id"].as_i64().expect("id"), d["secret"].as_str().expect("secret").to_owned())
}

/// Records an event through the outbox, in its own transaction, as the code paths do: the sample
/// event of type `event` ([`event_of`]).
pub async fn emit(app: &TestApp, ws: i64, event: EventType, data: Value) {
    let mut conn = app.db.conn().await.expect("conn");
    let event = event_of(event, &data);
    adapters_postgres::webhooks::outbox::record(&mut conn, WorkspaceId(ws), OffsetDateTime::now_utc(), &[event])
        .await
        .expect("record");
}

/// The sample event of type `event` with the members of `data` it names: `id` of every record,
/// `channel_id` and `thread_id` of a message or thread, a message's `content`.
pub fn event_of(event: EventType, data: &Value) -> DomainEvent {
    let int = |k: &str| data.get(k).and_then(Value::as_i64);
    let mut e = sample_event(event, DestinationId(0), OffsetDateTime::now_utc()).expect("a catalogue event");
    match &mut e {
        DomainEvent::MessageCreated(m) | DomainEvent::MessageStatusUpdated(m) => {
            m.id = int("id").unwrap_or(m.id);
            m.channel_id = int("channel_id").unwrap_or(m.channel_id);
            m.thread_id = int("thread_id").unwrap_or(m.thread_id);
            if let Some(content) = data.get("content").and_then(Value::as_str) {
                content.clone_into(&mut m.content);
            }
        }
        DomainEvent::ThreadCreated(t)
        | DomainEvent::ThreadStatusChanged(t)
        | DomainEvent::ThreadAssigned(t)
        | DomainEvent::ThreadLabelsChanged(t)
        | DomainEvent::SlaBreached(t) => {
            t.id = int("id").unwrap_or(t.id);
            t.channel_id = int("channel_id").unwrap_or(t.channel_id);
            t.contact_id = int("contact_id").unwrap_or(t.contact_id);
        }
        DomainEvent::ContactCreated(c) | DomainEvent::ContactUpdated(c) => c.id = int("id").unwrap_or(c.id),
        DomainEvent::ContactDeleted(c) => c.id = int("id").unwrap_or(c.id),
        DomainEvent::ChannelCreated(c) | DomainEvent::ChannelUpdated(c) => c.id = int("id").unwrap_or(c.id),
        DomainEvent::WebhookDisabled(w) | DomainEvent::WebhookFailing(w) | DomainEvent::WebhookRecovered(w) => {
            w.id = int("id").unwrap_or(w.id);
        }
        DomainEvent::TemplateStatusUpdated(t) => t.channel_id = int("channel_id").unwrap_or(t.channel_id),
    }
    e
}

async fn deliveries(app: &TestApp, key: &str, id: i64) -> Vec<Value> {
    let (status, body) = app.get_json(&format!("/v1/webhooks/{id}/deliveries"), key).await;
    assert_eq!(status, 200);
    body["data"].as_array().cloned().unwrap_or_default()
}

async fn destination_record(app: &TestApp, key: &str, id: i64) -> Value {
    app.get_json(&format!("/v1/webhooks/{id}"), key).await.1
}

fn engine(app: &TestApp, clock: &TestClock) -> Arc<DeliveryEngine> {
    app::webhooks::engine(&app.settings, &app.db, Arc::new(clock.clone()))
}

fn at(v: &Value) -> OffsetDateTime {
    OffsetDateTime::parse(v.as_str().expect("timestamp"), &time::format_description::well_known::Rfc3339)
        .expect("rfc3339")
}

#[tokio::test]
async fn a_created_channel_reaches_the_receiver_signed() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let (_, secret) = destination(&app, &key, &receiver.url("/hook"), &["channel.created"]).await;
    let workers = app::webhooks::start(
        &app.settings,
        app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
    );

    let channel = app.channel(&key, "whatsapp", "+14155550123", "active").await;

    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    let r = &got[0];
    assert_eq!(r.path, "/hook");
    assert_eq!(r.header("content-type"), "application/json");
    assert!(r.header("user-agent").starts_with("wms-webhooks/"));
    assert!(r.header("webhook-id").starts_with("msg_"));
    let body = r.json();
    assert_eq!(body["type"], "channel.created");
    assert_eq!(body["workspace_id"], ws.id);
    assert_eq!(body["data"]["id"], channel);
    assert!(body["timestamp"].is_string());
    let ts: i64 = r.header("webhook-timestamp").parse().expect("epoch seconds");
    let secret = SigningSecret::parse(&secret).expect("secret");
    assert_eq!(r.header("webhook-signature"), secret.sign(r.header("webhook-id"), ts, &r.body));
    workers.stop(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn failures_follow_the_retry_schedule_with_jitter_then_fail() {
    let app = TestApp::spawn_with(|s| {
        loopback(s);
        s.webhooks.retry_schedule = "5,300,1800".into();
    })
    .await;
    let receiver = Receiver::start().await;
    receiver.answer_always(Answer { body: "database is down".into(), ..Answer::status(500) });
    let (ws, key) = app.advanced_with_key().await;
    let (id, _) = destination(&app, &key, &receiver.url("/"), &["contact.created"]).await;
    emit(&app, ws.id, EventType::ContactCreated, json!({"id": 1})).await;
    let clock = TestClock::new();
    let engine = engine(&app, &clock);

    for (attempt, delay) in [(1, 5.0), (2, 300.0), (3, 1800.0)] {
        assert_eq!(app::webhooks::run_once(&engine, 10).await.expect("run"), 1, "attempt {attempt} is due");
        assert_eq!(app::webhooks::run_once(&engine, 10).await.expect("run"), 0, "nothing due before the delay");
        let d = &deliveries(&app, &key, id).await[0];
        assert_eq!((d["status"].as_str(), d["attempt_count"].as_i64()), (Some("pending"), Some(attempt)));
        let last = &d["attempts"][attempt as usize - 1];
        assert_eq!(
            (last["status_code"].as_i64(), last["response_excerpt"].as_str()),
            (Some(500), Some("database is down"))
        );
        let waited = (at(&last["next_attempt_at"]) - at(&last["attempted_at"])).as_seconds_f64();
        assert!((delay..=1.2 * delay).contains(&waited), "attempt {attempt}: waited {waited} s");
        clock.advance(time::Duration::seconds_f64(1.2 * delay + 1.0));
    }
    assert_eq!(app::webhooks::run_once(&engine, 10).await.expect("run"), 1, "the last attempt");
    let d = &deliveries(&app, &key, id).await[0];
    assert_eq!((d["status"].as_str(), d["attempt_count"].as_i64()), (Some("failed"), Some(4)));
    assert!(d["next_attempt_at"].is_null() && d["attempts"][3]["next_attempt_at"].is_null());
    assert_eq!(receiver.received().len(), 4);
    let ids: Vec<String> = receiver.received().iter().map(|r| r.header("webhook-id").to_owned()).collect();
    assert!(ids.iter().all(|i| *i == ids[0]), "every retry carries the same webhook-id");
}

#[tokio::test]
async fn retry_after_on_503_is_honoured() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    receiver.answer_next([Answer { headers: vec![("retry-after".into(), "120".into())], ..Answer::status(503) }]);
    let (ws, key) = app.advanced_with_key().await;
    let (id, _) = destination(&app, &key, &receiver.url("/"), &["contact.created"]).await;
    emit(&app, ws.id, EventType::ContactCreated, json!({"id": 1})).await;
    let clock = TestClock::new();
    let engine = engine(&app, &clock);
    app::webhooks::run_once(&engine, 10).await.expect("run");
    let d = &deliveries(&app, &key, id).await[0];
    let a = &d["attempts"][0];
    assert_eq!((at(&a["next_attempt_at"]) - at(&a["attempted_at"])).whole_seconds(), 120);
    clock.advance(time::Duration::seconds(60));
    assert_eq!(app::webhooks::run_once(&engine, 10).await.expect("run"), 0, "not before Retry-After");
    clock.advance(time::Duration::seconds(61));
    assert_eq!(app::webhooks::run_once(&engine, 10).await.expect("run"), 1);
    assert_eq!(deliveries(&app, &key, id).await[0]["status"], "succeeded");
}

#[tokio::test]
async fn gone_deactivates_the_destination_at_once() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    receiver.answer_always(Answer::status(410));
    let (ws, key) = app.advanced_with_key().await;
    let (id, _) = destination(&app, &key, &receiver.url("/"), &["contact.created"]).await;
    emit(&app, ws.id, EventType::ContactCreated, json!({"id": 1})).await;
    emit(&app, ws.id, EventType::ContactCreated, json!({"id": 2})).await;
    let engine = engine(&app, &TestClock::new());
    // One at a time: the first 410 deactivates, the second delivery is parked, never sent.
    let limits = engine.policy.limits;
    let claims = engine.queue.claim_due(engine.clock.now(), 1, limits).await.expect("claim").deliveries;
    let rec = engine.attempt(&claims[0]).await;
    engine.queue.record(&[rec], engine.policy.auto_disable_after, engine.policy.limits.bounds()).await.expect("record");
    assert_eq!(app::webhooks::run_once(&engine, 10).await.expect("run"), 0);

    let d = destination_record(&app, &key, id).await;
    assert_eq!(d["active"], false);
    assert!(d["disabled_reason"].as_str().is_some_and(|r| r.contains("410")), "{d}");
    let log = deliveries(&app, &key, id).await;
    let statuses: Vec<&str> = log.iter().filter_map(|d| d["status"].as_str()).collect();
    assert_eq!(statuses, ["paused", "failed"], "newest first");
    assert_eq!(receiver.received().len(), 1);
    // Inactive: new events are not queued for it.
    emit(&app, ws.id, EventType::ContactCreated, json!({"id": 3})).await;
    assert_eq!(deliveries(&app, &key, id).await.len(), 2);
}

#[tokio::test]
async fn a_retry_recorded_after_its_destination_was_switched_off_is_paused() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    receiver.answer_always(Answer::status(500));
    let (ws, key) = app.advanced_with_key().await;
    let (id, _) = destination(&app, &key, &receiver.url("/"), &["contact.created"]).await;
    emit(&app, ws.id, EventType::ContactCreated, json!({"id": 1})).await;
    let engine = engine(&app, &TestClock::new());
    let limits = engine.policy.limits;
    let claims = engine.queue.claim_due(engine.clock.now(), 1, limits).await.expect("claim").deliveries;
    let rec = engine.attempt(&claims[0]).await;
    // Switched off while the attempt was in flight.
    let res = app.authed(Method::PATCH, &format!("/v1/webhooks/{id}"), &key).json(&json!({"active": false})).send();
    assert_eq!(res.await.expect("req").status(), 200);
    engine.queue.record(&[rec], engine.policy.auto_disable_after, engine.policy.limits.bounds()).await.expect("record");

    let log = deliveries(&app, &key, id).await;
    assert_eq!(log[0]["status"], "paused", "{log:?}");
    assert_eq!(log[0]["attempts"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn five_days_of_failures_deactivate_and_a_success_resets_the_clock() {
    let app = TestApp::spawn_with(|s| {
        loopback(s);
        s.webhooks.retry_schedule = "60".into();
    })
    .await;
    let receiver = Receiver::start().await;
    receiver.answer_always(Answer::status(500));
    let (ws, key) = app.advanced_with_key().await;
    let (id, _) = destination(&app, &key, &receiver.url("/"), &["contact.updated"]).await;
    let clock = TestClock::new();
    let engine = engine(&app, &clock);

    emit(&app, ws.id, EventType::ContactUpdated, json!({"id": 1})).await;
    app::webhooks::run_once(&engine, 10).await.expect("run");
    clock.advance(time::Duration::days(3));
    // A success in between resets the clock.
    receiver.answer_next([Answer::status(200)]);
    app::webhooks::run_once(&engine, 10).await.expect("run");
    emit(&app, ws.id, EventType::ContactUpdated, json!({"id": 2})).await;
    app::webhooks::run_once(&engine, 10).await.expect("run");
    clock.advance(time::Duration::days(3));
    emit(&app, ws.id, EventType::ContactUpdated, json!({"id": 3})).await;
    app::webhooks::run_once(&engine, 10).await.expect("run");
    assert_eq!(destination_record(&app, &key, id).await["active"], true, "3 days of failures since the success");

    clock.advance(time::Duration::days(2));
    emit(&app, ws.id, EventType::ContactUpdated, json!({"id": 4})).await;
    app::webhooks::run_once(&engine, 10).await.expect("run");
    let d = destination_record(&app, &key, id).await;
    assert_eq!(d["active"], false, "5 days of failures");
    assert!(d["disabled_reason"].as_str().is_some_and(|r| r.contains("5 days")), "{d}");

    // Reactivation clears the note and resumes what was waiting.
    let res = app.authed(Method::PATCH, &format!("/v1/webhooks/{id}"), &key).json(&json!({"active": true})).send();
    let d: Value = res.await.expect("req").json().await.expect("json");
    assert_eq!((d["active"].as_bool(), d["disabled_reason"].is_null()), (Some(true), true));
    let log = deliveries(&app, &key, id).await;
    assert!(log.iter().all(|d| d["status"] != "paused"), "{log:?}");
}

#[tokio::test]
async fn manual_retry_redelivers_with_the_same_webhook_id() {
    let app = TestApp::spawn_with(|s| {
        loopback(s);
        s.webhooks.retry_schedule = "5".into();
    })
    .await;
    let receiver = Receiver::start().await;
    receiver.answer_always(Answer::status(500));
    let (ws, key) = app.advanced_with_key().await;
    let (id, _) = destination(&app, &key, &receiver.url("/"), &["thread.created"]).await;
    emit(&app, ws.id, EventType::ThreadCreated, json!({"id": 9})).await;
    let clock = TestClock::new();
    let engine = engine(&app, &clock);
    app::webhooks::run_once(&engine, 10).await.expect("run");
    clock.advance(time::Duration::seconds(10));
    app::webhooks::run_once(&engine, 10).await.expect("run");
    let d = deliveries(&app, &key, id).await.remove(0);
    assert_eq!(d["status"], "failed", "the schedule ran out");

    receiver.answer_always(Answer::status(202));
    let path = format!("/v1/webhooks/{id}/deliveries/{}/retry", d["id"]);
    let res = app.post_json(&path, &key, &json!({})).await;
    assert_eq!(res.status(), 200);
    let after: Value = res.json().await.expect("json");
    assert_eq!((after["status"].as_str(), after["attempt_count"].as_i64()), (Some("succeeded"), Some(3)));
    let last = &after["attempts"][2];
    assert_eq!((last["trigger"].as_str(), last["status_code"].as_i64()), (Some("manual"), Some(202)));
    let got = receiver.received();
    assert_eq!(got.len(), 3);
    assert_eq!(got[2].header("webhook-id"), got[0].header("webhook-id"));
    assert_eq!(got[2].header("webhook-id"), after["message_id"].as_str().unwrap_or(""));

    let res = app.post_json(&format!("/v1/webhooks/{id}/deliveries/999999/retry"), &key, &json!({})).await;
    crate::helpers::problem(res, 404, "not_found").await;
}

#[tokio::test]
async fn test_event_is_sent_now_signed_and_logged() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    receiver.answer_next([Answer { body: "thanks".into(), ..Answer::status(200) }]);
    let (ws, key) = app.advanced_with_key().await;
    let (id, secret) = destination(&app, &key, &receiver.url("/t"), &["message.created"]).await;
    // Also on an inactive destination (that is how one checks it before reactivating).
    let _ = app.authed(Method::PATCH, &format!("/v1/webhooks/{id}"), &key).json(&json!({"active": false})).send().await;

    let res = app.post_json(&format!("/v1/webhooks/{id}/test"), &key, &json!({})).await;
    assert_eq!(res.status(), 200);
    let d: Value = res.json().await.expect("json");
    assert_eq!((d["event_type"].as_str(), d["status"].as_str()), (Some("webhook.test"), Some("succeeded")));
    assert_eq!(d["attempts"][0]["status_code"], 200);
    assert_eq!(d["attempts"][0]["response_excerpt"], "thanks");
    assert_eq!(d["payload"]["workspace_id"], ws.id);

    let r = &receiver.received()[0];
    let body = r.json();
    assert_eq!(body["type"], "webhook.test");
    let mut members: Vec<&str> = body.as_object().expect("object").keys().map(String::as_str).collect();
    members.sort_unstable();
    assert_eq!(members, ["data", "timestamp", "type", "workspace_id"]);
    let secret = SigningSecret::parse(&secret).expect("secret");
    let ts: i64 = r.header("webhook-timestamp").parse().expect("ts");
    assert_eq!(r.header("webhook-signature"), secret.sign(r.header("webhook-id"), ts, &r.body));
    assert_eq!(deliveries(&app, &key, id).await.len(), 1, "in the delivery log");

    // An endpoint that fails is reported, not retried.
    receiver.answer_always(Answer::status(401));
    let d: Value =
        app.post_json(&format!("/v1/webhooks/{id}/test"), &key, &json!({})).await.json().await.expect("json");
    assert_eq!((d["status"].as_str(), d["attempts"][0]["status_code"].as_i64()), (Some("failed"), Some(401)));
}

#[tokio::test]
async fn connect_time_check_refuses_a_name_that_now_resolves_to_loopback() {
    // Saved while allowed (as if the name had resolved to a public address then)…
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let port = receiver.base.rsplit(':').next().unwrap_or("0").to_owned();
    let (id, _) = destination(&app, &key, &format!("http://localhost:{port}/"), &["contact.created"]).await;
    emit(&app, ws.id, EventType::ContactCreated, json!({"id": 1})).await;
    // …delivered by a worker whose configuration does not allow loopback.
    let mut strict = app.settings.clone();
    strict.webhooks.allowed_subnets = None;
    let engine = app::webhooks::engine(&strict, &app.db, Arc::new(TestClock::new()));
    app::webhooks::run_once(&engine, 10).await.expect("run");

    let d = &deliveries(&app, &key, id).await[0];
    let err = d["attempts"][0]["error"].as_str().unwrap_or("");
    assert!(err.contains("refused") && err.contains("private, loopback or reserved"), "{err}");
    // The tenant reads this error: what the name resolves to inside the network stays out of it.
    assert!(!err.contains("127.0.0.1") && !err.contains("::1"), "{err}");
    assert!(d["attempts"][0]["status_code"].is_null());
    assert!(receiver.received().is_empty(), "nothing reached the loopback receiver");

    // A literal loopback address is refused the same way.
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query(format!("UPDATE webhook_destinations SET url = 'http://127.0.0.1:{port}/' WHERE id = {id}"))
        .execute(&mut conn)
        .await
        .expect("update");
    emit(&app, ws.id, EventType::ContactCreated, json!({"id": 2})).await;
    app::webhooks::run_once(&engine, 10).await.expect("run");
    assert!(receiver.received().is_empty());
}
