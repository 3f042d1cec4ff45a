//! A webhook destination's manual sends in the audit log: a replay (`webhook.replayed`, in the
//! transaction that queues the events), a retry of one delivery (`webhook.delivery_retried`) and
//! a test send (`webhook.test_sent`), each once, with who and where, never the secret or the
//! payload's signature; a refused one (unknown delivery, another workspace) leaves none. The
//! record is stored in the transaction that claims or creates the delivery: one that cannot be
//! recorded is not sent.

use domain::webhooks::EventType;
use reqwest::Method;
use serde_json::{json, Value};

use super::sign_ins::break_inserts;
use super::{advanced, check, count, one, records, req};
use crate::credentials::{sql, sql_bool};
use crate::helpers::TestApp;
use crate::webhooks_delivery::{destination, emit, loopback};
use crate::webhooks_receiver::Receiver;

#[tokio::test]
async fn replays_retries_and_test_sends_are_recorded_once_and_never_hold_the_secret() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (ws, token) = advanced(&app).await;
    let (other, other_token) = advanced(&app).await;
    let actor = ("user", Some(ws.admin_id));
    // An event from before the destination existed: only a replay sends it.
    emit(&app, ws.id, EventType::ContactCreated, json!({"id": 1})).await;
    let (id, secret) = destination(&app, &token, &receiver.url("/"), &["contact.created"]).await;
    let base = format!("/v1/webhooks/{id}");
    let since = (time::OffsetDateTime::now_utc() - time::Duration::hours(1))
        .format(&time::format_description::well_known::Rfc3339)
        .expect("time");

    let replay = json!({"since": since});
    let res = req(&app, Method::POST, &format!("{base}/replay"), &token, "rid-replay").json(&replay).send().await;
    let answer: Value = res.expect("request").json().await.expect("json");
    assert_eq!(answer["queued"], 1, "{answer}");
    let r = one(&app, &token, "webhook.replayed").await;
    check(&r, actor, ("webhook", id), "rid-replay");
    assert_eq!((r["details"]["queued"].as_i64(), r["details"]["since"].as_str()), (Some(1), Some(since.as_str())));
    // The same window again queues nothing: no change, no record.
    let res = req(&app, Method::POST, &format!("{base}/replay"), &token, "rid-replay-2").json(&replay).send().await;
    assert_eq!(res.expect("request").json::<Value>().await.expect("json")["queued"], 0);
    assert_eq!(records(&app, &token, "webhook.replayed").await.len(), 1);

    let (_, deliveries) = app.get_json(&format!("{base}/deliveries"), &token).await;
    let delivery = deliveries["data"][0]["id"].as_i64().expect("the replayed delivery");
    let retry = format!("{base}/deliveries/{delivery}/retry");
    let res = req(&app, Method::POST, &retry, &token, "rid-retry").send().await.expect("request");
    assert_eq!(res.status(), 200);
    let r = one(&app, &token, "webhook.delivery_retried").await;
    check(&r, actor, ("webhook", id), "rid-retry");
    assert_eq!(r["details"]["delivery_id"], delivery);
    // An unknown delivery is not found and not recorded.
    let unknown = format!("{base}/deliveries/{}/retry", delivery + 1000);
    let res = req(&app, Method::POST, &unknown, &token, "rid-retry-404").send().await.expect("request");
    assert_eq!(res.status(), 404);
    assert_eq!(records(&app, &token, "webhook.delivery_retried").await.len(), 1);

    let res = req(&app, Method::POST, &format!("{base}/test"), &token, "rid-test").send().await.expect("request");
    assert_eq!(res.status(), 200);
    let sent: Value = res.json().await.expect("json");
    let r = one(&app, &token, "webhook.test_sent").await;
    check(&r, actor, ("webhook", id), "rid-test");
    assert_eq!(
        (r["details"]["event_type"].as_str(), &r["details"]["delivery_id"]),
        (Some("webhook.test"), &sent["id"])
    );
    // Another workspace's admin cannot send to it, and nothing is recorded in either log.
    let res = req(&app, Method::POST, &format!("{base}/test"), &other_token, "rid-test-foreign").send().await;
    assert_eq!(res.expect("request").status(), 404);
    assert_eq!(records(&app, &token, "webhook.test_sent").await.len(), 1);
    assert_eq!(count(&app, other.id).await, 0);

    // The signing secret and what it signed never reach the log.
    let signatures: Vec<String> = receiver
        .received()
        .iter()
        .map(|r| r.header("webhook-signature").to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    assert!(!signatures.is_empty(), "the receiver got signed requests");
    let (_, all) = app.get_json("/v1/audit-events?limit=100", &token).await;
    let text = all.to_string();
    assert!(!text.contains(&secret) && !text.contains("whsec_"), "no secret in {text}");
    for s in signatures {
        assert!(!text.contains(&s), "no signature in {text}");
    }
}

#[tokio::test]
async fn a_manual_send_and_its_record_are_stored_together_or_not_at_all() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (_ws, token) = advanced(&app).await;
    let (id, _) = destination(&app, &token, &receiver.url("/"), &["contact.created"]).await;
    let base = format!("/v1/webhooks/{id}");
    let res = req(&app, Method::POST, &format!("{base}/test"), &token, "rid-test-ok").send().await.expect("request");
    assert_eq!(res.status(), 200);
    let delivery = res.json::<Value>().await.expect("json")["id"].as_i64().expect("delivery id");
    let deliveries = |n: i64| format!("SELECT count(*) = {n} FROM webhook_deliveries WHERE destination_id = {id}");
    let attempts = |n: i64| format!("SELECT attempt_count = {n} FROM webhook_deliveries WHERE id = {delivery}");
    assert!(sql_bool(&app, &deliveries(1)).await && sql_bool(&app, &attempts(1)).await);
    let sent = receiver.received().len();

    // The record cannot be stored: neither the retry's claim nor the test's delivery is, and
    // nothing is sent.
    break_inserts(&app, "audit_events", "NEW.action LIKE 'webhook.%'").await;
    let retry = format!("{base}/deliveries/{delivery}/retry");
    let res = req(&app, Method::POST, &retry, &token, "rid-retry-broken").send().await.expect("request");
    assert!(res.status().is_server_error(), "{}", res.status());
    let res = req(&app, Method::POST, &format!("{base}/test"), &token, "rid-test-broken").send().await;
    assert!(res.expect("request").status().is_server_error());
    assert!(sql_bool(&app, &deliveries(1)).await, "no test delivery without its record");
    assert!(
        sql_bool(&app, &format!("SELECT status <> 'sending' FROM webhook_deliveries WHERE id = {delivery}")).await,
        "no claim without its record"
    );
    assert_eq!(receiver.received().len(), sent, "nothing sent");
    assert_eq!(records(&app, &token, "webhook.delivery_retried").await.len(), 0);
    assert_eq!(records(&app, &token, "webhook.test_sent").await.len(), 1);

    // Mended: the retry goes out and is recorded once.
    sql(&app, "DROP TRIGGER test_refuse ON audit_events").await;
    let res = req(&app, Method::POST, &retry, &token, "rid-retry-ok").send().await.expect("request");
    assert_eq!(res.status(), 200);
    assert!(sql_bool(&app, &attempts(2)).await);
    assert_eq!(records(&app, &token, "webhook.delivery_retried").await.len(), 1);
}
