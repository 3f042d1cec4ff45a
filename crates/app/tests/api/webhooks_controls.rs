//! Destination controls against a real receiver: caps, static headers, filter and per-thread
//! ordering; bad input; the stats; `webhook.failing` / `webhook.recovered` / `webhook.disabled`
//! reaching another destination.

use std::sync::Arc;
use std::time::Duration;

use domain::webhooks::EventType;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{error_fields, problem, test_template, TestApp};
use crate::mail_sink::{mail_to, SmtpSink};
use crate::webhooks_delivery::{destination, emit, loopback, TestClock};
use crate::webhooks_receiver::{Answer, Received, Receiver};

async fn patch(app: &TestApp, key: &str, id: i64, body: &Value) -> reqwest::Response {
    app.authed(Method::PATCH, &format!("/v1/webhooks/{id}"), key).json(body).send().await.expect("request")
}

fn workers(app: &TestApp) -> app::webhooks::Workers {
    app::webhooks::start(
        &app.settings,
        app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
    )
}

#[tokio::test]
async fn controls_are_stored_answered_and_cleared() {
    let app = TestApp::spawn_with(loopback).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550100", "active").await;
    let body = json!({
        "url": "http://127.0.0.1:9/h", "events": ["message.created"],
        "rate_limit_per_second": 50, "max_in_flight": 4,
        "headers": {"X-Api-Key": "k_1", "Authorization": "Bearer t"},
        "filter": {"channel_ids": [ch], "labels": ["vip"]}, "ordering": "per_thread",
    });
    let res = app.post_json("/v1/webhooks", &key, &body).await;
    assert_eq!(res.status(), 201);
    let created: Value = res.json().await.expect("json");
    let id = created["id"].as_i64().expect("id");
    let (_, got) = app.get_json(&format!("/v1/webhooks/{id}"), &key).await;
    assert_eq!(got["rate_limit_per_second"], 50);
    assert_eq!(got["max_in_flight"], 4);
    assert_eq!(got["headers"], json!({"Authorization": "Bearer t", "X-Api-Key": "k_1"}), "names as written");
    assert_eq!(got["filter"], json!({"channel_ids": [ch], "labels": ["vip"]}));
    assert_eq!(got["ordering"], "per_thread");

    let res = patch(&app, &key, id, &json!({"rate_limit_per_second": null, "filter": null, "headers": {}})).await;
    assert_eq!(res.status(), 200);
    let got: Value = res.json().await.expect("json");
    assert_eq!(
        (&got["rate_limit_per_second"], &got["filter"], &got["headers"]),
        (&json!(null), &json!(null), &json!({}))
    );
    assert_eq!((&got["max_in_flight"], &got["ordering"]), (&json!(4), &json!("per_thread")), "untouched");
    let res = patch(&app, &key, id, &json!({"ordering": "none", "max_in_flight": 100})).await;
    let got: Value = res.json().await.expect("json");
    assert_eq!((&got["max_in_flight"], &got["ordering"]), (&json!(100), &json!("none")));
}

#[tokio::test]
async fn bad_controls_are_refused_naming_the_field_and_change_nothing() {
    let app = TestApp::spawn_with(loopback).await;
    let (ws, key) = app.advanced_with_key().await;
    let (_, other_key) = app.advanced_with_key().await;
    let foreign = app.channel(&other_key, "whatsapp", "+14155550101", "active").await;
    let (id, _) = destination(&app, &key, "http://127.0.0.1:9/h", &["message.created"]).await;
    let before = app.get_json(&format!("/v1/webhooks/{id}"), &key).await.1;
    let cases = [
        (json!({"rate_limit_per_second": 0}), "rate_limit_per_second"),
        (json!({"rate_limit_per_second": 1001}), "rate_limit_per_second"),
        (json!({"rate_limit_per_second": "fast"}), "rate_limit_per_second"),
        (json!({"max_in_flight": 0}), "max_in_flight"),
        (json!({"max_in_flight": 101}), "max_in_flight"),
        (json!({"headers": {"webhook-id": "x"}}), "headers"),
        (json!({"headers": {"Webhook-Signature": "x"}}), "headers"),
        (json!({"headers": {"Content-Type": "text/plain"}}), "headers"),
        (json!({"headers": {"content-length": "1"}}), "headers"),
        (json!({"headers": {"Host": "evil.example"}}), "headers"),
        (json!({"headers": {"x-a": "line\nbreak"}}), "headers"),
        (
            json!({"headers": (0..11).map(|i| (format!("x-{i}"), json!("v"))).collect::<serde_json::Map<_, _>>()}),
            "headers",
        ),
        (json!({"filter": {"channel_ids": [foreign]}}), "filter"),
        (json!({"filter": {"channel_ids": [999_999]}}), "filter"),
        (json!({"ordering": "fifo"}), "ordering"),
    ];
    for (change, field) in &cases {
        let res = patch(&app, &key, id, change).await;
        let p = problem(res, 422, "validation_failed").await;
        assert!(error_fields(&p).iter().any(|f| f.starts_with(field)), "{change}: {p}");
        let mut create = change.clone();
        create["url"] = json!("http://127.0.0.1:9/new");
        create["events"] = json!(["message.created"]);
        let p = problem(app.post_json("/v1/webhooks", &key, &create).await, 422, "validation_failed").await;
        assert!(error_fields(&p).iter().any(|f| f.starts_with(field)), "create {change}: {p}");
    }
    assert_eq!(app.get_json(&format!("/v1/webhooks/{id}"), &key).await.1, before, "nothing changed");
    assert_eq!(app.get_json("/v1/webhooks", &key).await.1["data"].as_array().map(Vec::len), Some(1), "none created");
    // The settings API takes the same controls and refuses the same input.
    let token = crate::credentials::admin_token(&app, &ws).await;
    let path = format!("/api/workspaces/{}/webhooks/{id}", ws.id);
    let res = app.authed(Method::PATCH, &path, &token).json(&json!({"max_in_flight": 0})).send().await.expect("req");
    assert_eq!(error_fields(&problem(res, 422, "validation_failed").await), ["max_in_flight"]);
    let res = app.authed(Method::PATCH, &path, &token).json(&json!({"max_in_flight": 7})).send().await.expect("req");
    assert_eq!(res.json::<Value>().await.expect("json")["max_in_flight"], 7);
}

#[tokio::test]
async fn static_headers_are_sent_and_wms_headers_stay_its_own() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let body = json!({"url": receiver.url("/h"), "events": ["contact.created"],
                      "headers": {"X-Api-Key": "k_123", "Authorization": "Bearer gw"}});
    assert_eq!(app.post_json("/v1/webhooks", &key, &body).await.status(), 201);
    emit(&app, ws.id, EventType::ContactCreated, json!({"id": 1})).await;
    let w = workers(&app);
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    w.stop(Duration::from_secs(5)).await;
    assert_eq!(got[0].header("x-api-key"), "k_123");
    assert_eq!(got[0].header("authorization"), "Bearer gw");
    assert_eq!(got[0].header("content-type"), "application/json");
    assert!(got[0].header("webhook-signature").starts_with("v1,"));
}

#[tokio::test]
async fn a_destination_cap_on_in_flight_holds_across_two_instances() {
    let app = TestApp::spawn_with(|s| {
        loopback(s);
        s.webhooks.poll_interval_ms = 20;
    })
    .await;
    let receiver = Receiver::start().await;
    receiver.answer_always(Answer { delay: Duration::from_millis(100), ..Answer::status(204) });
    let (ws, key) = app.advanced_with_key().await;
    let body = json!({"url": receiver.url("/"), "events": ["message.created"], "max_in_flight": 2});
    assert_eq!(app.post_json("/v1/webhooks", &key, &body).await.status(), 201);
    for i in 0..20 {
        emit(&app, ws.id, EventType::MessageCreated, json!({"id": i})).await;
    }
    let (a, b) = (workers(&app), workers(&app));
    let got = receiver.wait_for(20, Duration::from_secs(30)).await;
    a.stop(Duration::from_secs(5)).await;
    b.stop(Duration::from_secs(5)).await;
    assert_eq!(got.len(), 20);
    assert_eq!(receiver.max_concurrent(), 2, "never more than its cap, but up to it");
}

#[tokio::test]
async fn a_destination_limited_to_20_per_second_receives_20_per_second() {
    let app = TestApp::spawn_with(|s| {
        loopback(s);
        s.webhooks.poll_interval_ms = 10;
    })
    .await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let body = json!({"url": receiver.url("/"), "events": ["message.created"], "rate_limit_per_second": 20});
    assert_eq!(app.post_json("/v1/webhooks", &key, &body).await.status(), 201);
    for i in 0..80 {
        emit(&app, ws.id, EventType::MessageCreated, json!({"id": i})).await;
    }
    let w = workers(&app);
    let got = receiver.wait_for(80, Duration::from_secs(30)).await;
    w.stop(Duration::from_secs(5)).await;
    // 20 at once (one second's worth), then 20 more each second: the other 60 over ~3 s, and
    // never more than 20 within a second, the first one included.
    let span = (got[79].at - got[0].at).as_secs_f64();
    let rate = 60.0 / span;
    assert!((18.0..=20.5).contains(&rate), "{rate:.1}/s after the first 20 ({span:.2} s for all 80)");
    assert_eq!(busiest_second(&got), 20);
}

/// The most requests that arrived within one second of each other.
fn busiest_second(got: &[Received]) -> usize {
    let mut at: Vec<_> = got.iter().map(|r| r.at).collect();
    at.sort();
    (0..at.len())
        .map(|i| at[i..].iter().take_while(|t| **t - at[i] < Duration::from_secs(1)).count())
        .max()
        .unwrap_or(0)
}

/// A claim held up on the destination's throttle (as by another instance's claim on a busy
/// database) sends later than it began: the window counts its sends from when they leave, not
/// from when the claim began, so the next ones still wait a whole second after them.
#[tokio::test]
async fn a_claim_held_up_on_its_throttle_counts_its_sends_from_when_they_leave() {
    use diesel_async::scoped_futures::ScopedFutureExt;
    use diesel_async::{AsyncConnection, RunQueryDsl};

    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let body = json!({"url": receiver.url("/"), "events": ["message.created"], "rate_limit_per_second": 3});
    assert_eq!(app.post_json("/v1/webhooks", &key, &body).await.status(), 201);
    for i in 0..9 {
        emit(&app, ws.id, EventType::MessageCreated, json!({"id": i})).await;
    }
    let w = workers(&app);
    receiver.wait_for(3, Duration::from_secs(10)).await;
    // The second three come due about 1.02 s after the first left: hold the throttle from 0.8 s
    // to 1.3 s, so their claim begins on time and sends late.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let mut conn = app.db.conn().await.expect("conn");
    conn.transaction::<_, diesel::result::Error, _>(|c| {
        async move {
            diesel::sql_query("SELECT 1 FROM webhook_throttles FOR UPDATE").execute(c).await?;
            tokio::time::sleep(Duration::from_millis(500)).await;
            Ok(())
        }
        .scope_boxed()
    })
    .await
    .expect("hold");
    let got = receiver.wait_for(9, Duration::from_secs(30)).await;
    w.stop(Duration::from_secs(5)).await;
    let offsets: Vec<String> = got.iter().map(|r| format!("{:.3}", (r.at - got[0].at).as_secs_f64())).collect();
    assert_eq!(busiest_second(&got), 3, "{offsets:?}");
}

#[tokio::test]
async fn a_destination_held_to_its_rate_is_sent_to_when_the_rate_allows_not_a_poll_later() {
    // A slow poll (700 ms): a claim that finds nothing due looks again when the next delivery
    // held back by the rate comes due, not up to a whole poll later.
    let app = TestApp::spawn_with(|s| {
        loopback(s);
        s.webhooks.poll_interval_ms = 700;
    })
    .await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let body = json!({"url": receiver.url("/"), "events": ["message.created"], "rate_limit_per_second": 5});
    assert_eq!(app.post_json("/v1/webhooks", &key, &body).await.status(), 201);
    for i in 0..25 {
        emit(&app, ws.id, EventType::MessageCreated, json!({"id": i})).await;
    }
    let w = workers(&app);
    let got = receiver.wait_for(25, Duration::from_secs(30)).await;
    w.stop(Duration::from_secs(5)).await;
    assert_eq!(busiest_second(&got), 5);
    // Four more windows of 1.02 s after the first five: 4.08 s when each is taken at once; up to
    // a poll's delay per window would make it 4.5 to 6.9 s.
    let span = (got[24].at - got[0].at).as_secs_f64();
    let offsets: Vec<String> = got.iter().map(|r| format!("{:.3}", (r.at - got[0].at).as_secs_f64())).collect();
    assert!((4.05..4.5).contains(&span), "{span:.3} s for all 25: {offsets:?}");
}

/// A destination's own caps are hard caps for the sends a member asks for too: a test send or a
/// manual retry beyond its `rate_limit_per_second` is refused with 429 and `Retry-After` (and
/// records nothing), and the ones that go are counted, so the scheduled deliveries that follow
/// keep the cap in every second.
#[tokio::test]
async fn test_sends_and_manual_retries_keep_a_destination_rate_cap() {
    let app = TestApp::spawn_with(|s| {
        loopback(s);
        s.webhooks.poll_interval_ms = 10;
    })
    .await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let body = json!({"url": receiver.url("/"), "events": ["message.created"], "rate_limit_per_second": 2});
    let res = app.post_json("/v1/webhooks", &key, &body).await;
    assert_eq!(res.status(), 201);
    let id = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    let test = format!("/v1/webhooks/{id}/test");
    let first = app.post_json(&test, &key, &json!({})).await;
    assert_eq!(first.status(), 200);
    let delivery = first.json::<Value>().await.expect("json")["id"].as_i64().expect("delivery id");
    assert_eq!(app.post_json(&test, &key, &json!({})).await.status(), 200);

    let refused = app.post_json(&test, &key, &json!({})).await;
    assert_eq!(refused.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("1"));
    let p = problem(refused, 429, "rate_limited").await;
    assert!(p["detail"].as_str().unwrap_or("").contains("rate_limit_per_second (2)"), "{p}");
    let retry = format!("/v1/webhooks/{id}/deliveries/{delivery}/retry");
    let refused = app.post_json(&retry, &key, &json!({})).await;
    assert!(refused.headers().contains_key("retry-after"));
    problem(refused, 429, "rate_limited").await;
    let (_, log) = app.get_json(&format!("/v1/webhooks/{id}/deliveries"), &key).await;
    assert_eq!(log["data"].as_array().map(Vec::len), Some(2), "a refused test records nothing: {log}");
    assert_eq!(receiver.received().len(), 2);

    // The two sends are counted: scheduled deliveries due now wait for their window to pass.
    for i in 0..4 {
        emit(&app, ws.id, EventType::MessageCreated, json!({"id": i})).await;
    }
    let w = workers(&app);
    let got = receiver.wait_for(6, Duration::from_secs(20)).await;
    assert_eq!(busiest_second(&got), 2, "{:?}", got.iter().map(|r| r.at - got[0].at).collect::<Vec<_>>());
    // Once a place frees, a manual retry goes (and counts like the others).
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let res = app.post_json(&retry, &key, &json!({})).await;
    assert_eq!(res.status(), 200, "{:?}", res.text().await);
    w.stop(Duration::from_secs(5)).await;
    assert_eq!(busiest_second(&receiver.received()), 2);
}

/// A test send beyond a destination's `max_in_flight` waits for no slot: it is refused with 429
/// while the destination's deliveries in flight fill its cap, and goes once one ends.
#[tokio::test]
async fn a_test_send_beyond_the_in_flight_cap_is_refused_until_a_slot_frees() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    receiver.answer_always(Answer { delay: Duration::from_millis(1500), ..Answer::status(204) });
    let (_, key) = app.advanced_with_key().await;
    let body = json!({"url": receiver.url("/"), "events": ["message.created"], "max_in_flight": 1});
    let res = app.post_json("/v1/webhooks", &key, &body).await;
    let id = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    let test = format!("/v1/webhooks/{id}/test");
    let slow = {
        let (client, url, key) = (app.client.clone(), app.url(&test), key.clone());
        tokio::spawn(async move { client.post(url).bearer_auth(key).send().await.expect("request").status() })
    };
    receiver.wait_for(1, Duration::from_secs(5)).await;
    let refused = app.post_json(&test, &key, &json!({})).await;
    assert_eq!(refused.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("1"));
    let p = problem(refused, 429, "rate_limited").await;
    assert!(p["detail"].as_str().unwrap_or("").contains("max_in_flight (1)"), "{p}");
    assert_eq!(slow.await.expect("join"), 200);
    assert_eq!(app.post_json(&test, &key, &json!({})).await.status(), 200, "the slot is free again");
    assert_eq!(receiver.max_concurrent(), 1);
}

#[tokio::test]
async fn a_filter_delivers_only_events_of_its_channels_and_labels() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (_, key) = app.advanced_with_key().await;
    let a = app.channel(&key, "whatsapp", "+14155550110", "active").await;
    let b = app.channel(&key, "whatsapp", "+14155550111", "active").await;
    assert_eq!(app.post_json("/v1/labels", &key, &json!({"name": "vip", "color": "#b45309"})).await.status(), 201);
    let body = json!({"url": receiver.url("/"), "events": ["message.created", "thread.labels_changed", "channel.updated"],
                      "filter": {"channel_ids": [a], "labels": ["vip"]}});
    assert_eq!(app.post_json("/v1/webhooks", &key, &body).await.status(), 201);
    let send = |ch: i64, to: &'static str, text: &'static str| {
        let app = &app;
        let key = key.clone();
        async move {
            let body = json!({"channel_id": ch, "content": text, "to": to, "template": test_template()});
            let res = app.post_json("/v1/messages", &key, &body).await;
            assert_eq!(res.status(), 201, "send");
            res.json::<Value>().await.expect("json")["thread_id"].as_i64().expect("thread")
        }
    };
    let label = |thread: i64| {
        let app = &app;
        let key = key.clone();
        async move {
            let res = app
                .authed(Method::PUT, &format!("/v1/threads/{thread}/labels"), &key)
                .json(&json!({"labels": ["vip"]}))
                .send()
                .await
                .expect("request");
            assert_eq!(res.status(), 200);
        }
    };
    let t_a = send(a, "+14155550120", "no label yet").await; // a's channel, no vip: not sent
    label(t_a).await; // sent
    send(a, "+14155550120", "vip on a").await; // sent
    let t_b = send(b, "+14155550121", "other channel").await;
    label(t_b).await; // vip but channel b: not sent
    send(b, "+14155550121", "still b").await;
    let res = app.authed(Method::PATCH, &format!("/v1/channels/{a}"), &key).json(&json!({"display_name": "A"})).send();
    assert_eq!(res.await.expect("request").status(), 200); // a channel event never matches a labels filter

    let w = workers(&app);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let got = receiver.wait_for(2, Duration::from_secs(10)).await;
    w.stop(Duration::from_secs(5)).await;
    // Without `ordering` the two may arrive in either order (they are sent at once).
    let mut seen: Vec<(String, String)> = got
        .iter()
        .map(|r| {
            let j = r.json();
            (j["type"].as_str().unwrap_or_default().to_owned(), j["data"]["content"].to_string())
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("message.created".to_owned(), "\"vip on a\"".to_owned()),
            ("thread.labels_changed".to_owned(), "null".to_owned())
        ],
        "only a's events of vip threads"
    );
}

#[tokio::test]
async fn per_thread_ordering_holds_a_thread_behind_its_failed_event_while_others_flow() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let body = json!({"url": receiver.url("/"), "events": ["message.created"], "ordering": "per_thread"});
    assert_eq!(app.post_json("/v1/webhooks", &key, &body).await.status(), 201);
    let msg = |id: i64, thread: i64| json!({"id": id, "thread_id": thread, "channel_id": 1});
    receiver.answer_next([Answer::status(500)]);
    emit(&app, ws.id, EventType::MessageCreated, msg(1, 100)).await;
    let clock = TestClock::new();
    let engine = app::webhooks::engine(&app.settings, &app.db, Arc::new(clock.clone()));
    assert_eq!(app::webhooks::run_once(&engine, 10).await.expect("run"), 1, "thread 100's first event fails");
    emit(&app, ws.id, EventType::MessageCreated, msg(2, 100)).await;
    emit(&app, ws.id, EventType::MessageCreated, msg(3, 200)).await;
    emit(&app, ws.id, EventType::MessageCreated, msg(4, 200)).await;
    // Thread 200 goes on, one event at a time in order; thread 100 waits for its retry.
    for _ in 0..3 {
        app::webhooks::run_once(&engine, 10).await.expect("run");
    }
    let ids =
        |r: &Receiver| r.received().iter().map(|r| r.json()["data"]["id"].as_i64().unwrap_or(0)).collect::<Vec<_>>();
    assert_eq!(ids(&receiver), [1, 3, 4], "2 waits for 1");
    clock.advance(time::Duration::seconds(10));
    for _ in 0..3 {
        app::webhooks::run_once(&engine, 10).await.expect("run");
    }
    assert_eq!(ids(&receiver), [1, 3, 4, 1, 2], "1 succeeded, then 2");
}

#[tokio::test]
async fn stats_count_known_successes_and_failures() {
    let app = TestApp::spawn_with(|s| {
        loopback(s);
        s.webhooks.retry_schedule = "5".into();
    })
    .await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let (id, _) = destination(&app, &key, &receiver.url("/"), &["contact.created"]).await;
    let empty = app.get_json(&format!("/v1/webhooks/{id}/stats"), &key).await;
    assert_eq!(empty.0, 200);
    assert_eq!((empty.1["delivered"].as_i64(), empty.1["failed_attempts"].as_i64()), (Some(0), Some(0)));
    assert!(empty.1["last_failure"].is_null());

    // Three events: one succeeds, one fails then succeeds, one fails twice (given up).
    receiver.answer_next([
        Answer::status(204),
        Answer { body: "busy".into(), ..Answer::status(500) },
        Answer::status(502),
    ]);
    for i in 0..3 {
        emit(&app, ws.id, EventType::ContactCreated, json!({"id": i})).await;
    }
    let clock = TestClock::new();
    let engine = app::webhooks::engine(&app.settings, &app.db, Arc::new(clock.clone()));
    assert_eq!(app::webhooks::run_once(&engine, 1).await.expect("run"), 1);
    assert_eq!(app::webhooks::run_once(&engine, 1).await.expect("run"), 1);
    assert_eq!(app::webhooks::run_once(&engine, 1).await.expect("run"), 1);
    let mid = app.get_json(&format!("/v1/webhooks/{id}/stats"), &key).await.1;
    assert_eq!(
        (mid["delivered"].as_i64(), mid["failed_attempts"].as_i64(), mid["pending"].as_i64()),
        (Some(1), Some(2), Some(2))
    );
    clock.advance(time::Duration::seconds(10));
    receiver.answer_next([Answer::status(200), Answer { body: "down".into(), ..Answer::status(503) }]);
    assert_eq!(app::webhooks::run_once(&engine, 1).await.expect("run"), 1);
    assert_eq!(app::webhooks::run_once(&engine, 1).await.expect("run"), 1);

    let since = "2020-01-01T00:00:00Z";
    let (status, s) = app.get_json(&format!("/v1/webhooks/{id}/stats?since={since}"), &key).await;
    assert_eq!(status, 200);
    assert_eq!(s["since"], since);
    assert_eq!(
        (s["delivered"].as_i64(), s["failed_attempts"].as_i64(), s["pending"].as_i64(), s["exhausted"].as_i64()),
        (Some(2), Some(3), Some(0), Some(1)),
        "{s}"
    );
    assert!((s["success_rate"].as_f64().expect("rate") - 0.4).abs() < 1e-9, "{s}");
    assert!(s["latency_ms"]["p50"].as_i64().is_some() && s["latency_ms"]["p95"].as_i64().is_some(), "{s}");
    assert_eq!(s["last_failure"]["status"], 503, "{s}");
    assert_eq!(s["last_failure"]["message"], "down");
    assert!(s["last_failure"]["at"].is_string());
    assert!(s["pace"]["max_in_flight"].as_i64().is_some_and(|n| n >= 1), "{s}");

    // A window after everything: nothing counted, the waiting ones still are.
    let later = app.get_json(&format!("/v1/webhooks/{id}/stats?since=2999-01-01T00:00:00Z"), &key).await.1;
    assert_eq!((later["delivered"].as_i64(), later["success_rate"].as_f64()), (Some(0), Some(1.0)));
    // Bad input, another workspace, the settings API's twin and the settings page.
    let p = problem(
        app.authed(Method::GET, &format!("/v1/webhooks/{id}/stats?since=yesterday"), &key).send().await.expect("req"),
        422,
        "validation_failed",
    )
    .await;
    assert_eq!(error_fields(&p), ["since"]);
    let (_, other) = app.advanced_with_key().await;
    problem(
        app.authed(Method::GET, &format!("/v1/webhooks/{id}/stats"), &other).send().await.expect("req"),
        404,
        "not_found",
    )
    .await;
    let token = crate::credentials::admin_token(&app, &ws).await;
    let (status, twin) =
        app.get_json(&format!("/api/workspaces/{}/webhooks/{id}/stats?since={since}", ws.id), &token).await;
    assert_eq!((status, &twin["delivered"]), (200, &json!(2)));
}

#[tokio::test]
async fn failing_recovered_and_disabled_reach_another_destination_and_the_admins_mailboxes() {
    let sink = SmtpSink::start().await;
    let app = TestApp::spawn_with(|s| {
        loopback(s);
        mail_to(s, sink.port);
    })
    .await;
    let mail = app.start_mail();
    let flaky = Receiver::start().await;
    let watcher = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let health = ["webhook.failing", "webhook.recovered", "webhook.disabled"];
    // The flaky one subscribes to them too: it never hears about itself. Its URL carries a
    // credential in the query, which the events leave out.
    let flaky_url = format!("{}?token=s3cret#frag", flaky.url("/f"));
    let (flaky_id, _) =
        destination(&app, &key, &flaky_url, &["channel.created", "webhook.failing", "webhook.recovered"]).await;
    destination(&app, &key, &watcher.url("/w"), &health).await;
    let test = format!("/v1/webhooks/{flaky_id}/test");
    let w = workers(&app);

    flaky.answer_always(Answer::status(500));
    for n in 1..=6 {
        assert_eq!(app.post_json(&test, &key, &json!({})).await.status(), 200);
        if n == 3 {
            tokio::time::sleep(Duration::from_millis(500)).await;
            assert!(watcher.received().is_empty(), "3 failures are not failing yet");
        }
    }
    let got = watcher.wait_for(1, Duration::from_secs(10)).await;
    let failing = got[0].json();
    assert_eq!(failing["type"], "webhook.failing");
    assert_eq!(failing["data"]["id"], flaky_id);
    assert_eq!(failing["data"]["url"], flaky.url("/f"), "no query or fragment");
    flaky.answer_always(Answer::status(204));
    assert_eq!(app.post_json(&test, &key, &json!({})).await.status(), 200);
    assert_eq!(app.post_json(&test, &key, &json!({})).await.status(), 200);
    let got = watcher.wait_for(2, Duration::from_secs(10)).await;
    assert_eq!(got[1].json()["type"], "webhook.recovered");
    flaky.answer_always(Answer::status(410));
    assert_eq!(app.post_json(&test, &key, &json!({})).await.status(), 200);
    let got = watcher.wait_for(3, Duration::from_secs(10)).await;
    assert_eq!(got[2].json()["type"], "webhook.disabled");
    tokio::time::sleep(Duration::from_millis(300)).await;
    w.stop(Duration::from_secs(5)).await;
    assert_eq!(watcher.received().len(), 3, "once each");
    let types: Vec<Value> = flaky.received().iter().map(|r| r.json()["type"].clone()).collect();
    assert!(types.iter().all(|t| t == "webhook.test"), "never its own: {types:?}");

    // The admin was e-mailed on failing and on deactivation (not on recovery), the URL redacted.
    let mails = sink.wait_for(2, Duration::from_secs(15)).await;
    mail.stop(Duration::from_secs(5)).await;
    assert_eq!(mails.len(), 2, "{mails:?}");
    assert!(mails.iter().all(|m| m.to == [ws.admin_email.to_lowercase()]), "{mails:?}");
    assert!(mails[0].subject.contains("failing") && mails[1].subject.contains("deactivated"), "{mails:?}");
    for m in &mails {
        let text = m.text.as_deref().unwrap_or_default();
        assert!(text.contains(&flaky.url("/f")) && !text.contains("s3cret"), "{text}");
        assert!(
            m.link("/settings/integrations/webhooks/").is_some_and(|l| l.ends_with(&format!("/{flaky_id}"))),
            "{text}"
        );
    }
    sink.stop().await;
}

/// `(headers::text, headers_encrypted)` of destination `id`, as stored.
async fn stored_headers(app: &TestApp, id: i64) -> (String, Option<Vec<u8>>) {
    use diesel::sql_types::{BigInt, Bytea, Nullable, Text};
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = Text)]
        headers: String,
        #[diesel(sql_type = Nullable<Bytea>)]
        sealed: Option<Vec<u8>>,
    }
    let mut conn = app.db.conn().await.expect("conn");
    let row: Row = diesel::sql_query(
        "SELECT headers::text AS headers, headers_encrypted AS sealed FROM webhook_destinations WHERE id = $1",
    )
    .bind::<BigInt, _>(id)
    .get_result(&mut conn)
    .await
    .expect("row");
    (row.headers, row.sealed)
}

/// Whether `needle` appears in any stored audit record or event of the database.
async fn in_audit_or_events(app: &TestApp, needle: &str) -> bool {
    crate::credentials::sql_bool(
        app,
        &format!(
            "SELECT EXISTS (SELECT 1 FROM audit_events WHERE details::text LIKE '%{needle}%')
                 OR EXISTS (SELECT 1 FROM webhook_events WHERE payload LIKE '%{needle}%') AS b"
        ),
    )
    .await
}

#[tokio::test]
async fn static_header_values_are_sealed_at_rest_and_kept_out_of_audit_records_and_events() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let body = json!({"url": receiver.url("/h"), "events": ["contact.created", "webhook.failing"],
                      "headers": {"X-Api-Key": "k_sealed_1"}});
    let res = app.post_json("/v1/webhooks", &key, &body).await;
    assert_eq!(res.status(), 201);
    let id = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    let (clear, sealed) = stored_headers(&app, id).await;
    assert_eq!(serde_json::from_str::<Value>(&clear).expect("json"), json!({"X-Api-Key": ""}), "names only");
    let sealed = sealed.expect("sealed values");
    assert!(!sealed.windows(10).any(|w| w == b"k_sealed_1"), "the value is not in the clear");

    let res = patch(&app, &key, id, &json!({"headers": {"X-Api-Key": "k_sealed_2"}})).await;
    assert_eq!(res.json::<Value>().await.expect("json")["headers"], json!({"X-Api-Key": "k_sealed_2"}));
    let (_, resealed) = stored_headers(&app, id).await;
    assert_ne!(resealed.as_deref(), Some(&sealed[..]), "a change seals the new value");
    emit(&app, ws.id, EventType::ContactCreated, json!({"id": 1})).await;
    let w = workers(&app);
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    w.stop(Duration::from_secs(5)).await;
    assert_eq!(got[0].header("x-api-key"), "k_sealed_2", "the sealed value is sent");
    assert!(!in_audit_or_events(&app, "k_sealed_").await, "no header value in audit records or events");
    // Sealed for its row: copied onto another destination, it does not open there.
    let (other, _) = destination(&app, &key, &receiver.url("/other"), &["contact.created"]).await;
    crate::credentials::sql(
        &app,
        &format!(
            "UPDATE webhook_destinations SET headers = '{{\"x-api-key\": \"\"}}', headers_encrypted = \
             (SELECT headers_encrypted FROM webhook_destinations WHERE id = {id}) WHERE id = {other}"
        ),
    )
    .await;
    let (_, moved) = app.get_json(&format!("/v1/webhooks/{other}"), &key).await;
    assert_eq!(moved["headers"], json!({"x-api-key": ""}), "a value that does not open is not shown");
}

#[tokio::test]
async fn header_values_stored_in_the_clear_before_the_upgrade_are_sealed_at_start_and_still_sent() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let (id, _) = destination(&app, &key, &receiver.url("/h"), &["contact.created"]).await;
    // The row as the release before left it: the values in the clear, nothing sealed.
    crate::credentials::sql(
        &app,
        &format!(
            "UPDATE webhook_destinations SET headers = '{{\"x-api-key\": \"k_old\"}}', headers_encrypted = NULL \
             WHERE id = {id}"
        ),
    )
    .await;
    // Before the first start of the new release seals them, deliveries still carry them.
    emit(&app, ws.id, EventType::ContactCreated, json!({"id": 1})).await;
    let w = workers(&app);
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    w.stop(Duration::from_secs(5)).await;
    assert_eq!(got[0].header("x-api-key"), "k_old");

    // What `wms serve` does at start, twice (the second finds nothing to do).
    app::webhooks::seal_plain_headers(&app.settings, &app.db).await;
    app::webhooks::seal_plain_headers(&app.settings, &app.db).await;
    let (clear, sealed) = stored_headers(&app, id).await;
    assert_eq!(serde_json::from_str::<Value>(&clear).expect("json"), json!({"x-api-key": ""}));
    assert!(sealed.is_some(), "sealed");
    let (_, got) = app.get_json(&format!("/v1/webhooks/{id}"), &key).await;
    assert_eq!(got["headers"], json!({"x-api-key": "k_old"}));
    emit(&app, ws.id, EventType::ContactCreated, json!({"id": 2})).await;
    let w = workers(&app);
    let got = receiver.wait_for(2, Duration::from_secs(10)).await;
    w.stop(Duration::from_secs(5)).await;
    assert_eq!(got[1].header("x-api-key"), "k_old", "the sealed value is sent");
}
