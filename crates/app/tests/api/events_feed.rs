//! `GET /v1/events` (the durable feed) and `POST /v1/webhooks/{id}/replay`.

use std::sync::Arc;
use std::time::Duration;

use domain::webhooks::EventType;
use reqwest::Method;
use serde_json::{json, Value};

use crate::events_helpers::{feed, feed_from};
use crate::helpers::{error_fields, problem, TestApp};
use crate::webhooks_delivery::{destination, emit, loopback, one_at_a_time, TestClock};
use crate::webhooks_receiver::{Answer, Receiver};

async fn channels(app: &TestApp, key: &str, n: usize, tag: &str) -> Vec<i64> {
    let mut ids = Vec::new();
    for i in 0..n {
        ids.push(app.channel(key, "messenger", &format!("page-{tag}-{i}"), "active").await);
    }
    ids
}

#[tokio::test]
async fn the_feed_keeps_every_event_without_destinations_oldest_first_in_pages() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let made = channels(&app, &key, 5, "a").await;
    let all = feed(&app, &key).await;

    let (status, page) = app.get_json("/v1/events?limit=2", &key).await;
    assert_eq!(status, 200);
    let first: Vec<Value> = page["data"].as_array().cloned().expect("data");
    assert_eq!(first.len(), 2);
    let got: Vec<i64> = all.iter().map(|e| e["data"]["id"].as_i64().expect("id")).collect();
    assert_eq!(got, made, "oldest first, no destination needed");
    assert_eq!(first, all[..2]);
    for e in &all {
        let keys: Vec<&str> = e.as_object().expect("object").keys().map(String::as_str).collect();
        assert_eq!(keys.len(), 5, "{e}");
        for k in ["id", "type", "timestamp", "workspace_id", "data"] {
            assert!(keys.contains(&k), "{k} in {e}");
        }
        assert_eq!(e["workspace_id"], ws.id);
        assert_eq!(e["type"], "channel.created");
    }

    // At the end: no data, and a cursor to resume from that brings exactly what comes next.
    let (rest, resume) = feed_from(&app, &key, None, "").await; // all visible: `feed` waited
    assert_eq!(rest.len(), 5);
    let (status, end) = app.get_json(&format!("/v1/events?cursor={resume}"), &key).await;
    assert_eq!((status, end["data"].as_array().map(Vec::len)), (200, Some(0)));
    assert!(end["next_cursor"].is_string(), "never null at the end");
    let later = channels(&app, &key, 2, "b").await;
    feed(&app, &key).await; // until they are visible
    let (next, _) = feed_from(&app, &key, Some(&resume), "").await;
    let got: Vec<i64> = next.iter().map(|e| e["data"]["id"].as_i64().expect("id")).collect();
    assert_eq!(got, later);

    // Another workspace sees none of it.
    let (_, other_key) = app.advanced_with_key().await;
    assert!(feed(&app, &other_key).await.is_empty());
}

/// The feed's events are kept `webhooks.retention_days`: pruning drops an event older than that
/// from `GET /v1/events` and keeps a younger one.
#[tokio::test]
async fn the_feed_keeps_events_for_the_retention_days_and_prunes_older_ones() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    channels(&app, &key, 2, "r").await;
    let events = feed(&app, &key).await;
    let (old, young) = (events[0]["id"].as_str().expect("id"), events[1]["id"].as_str().expect("id"));
    let days = app.settings.webhooks.retention_days;
    assert_eq!(days, 30, "the default");
    for (id, age) in [(old, days + 1), (young, days - 1)] {
        let aged =
            format!("UPDATE webhook_events SET created_at = now() - interval '{age} days' WHERE message_id = '{id}'");
        crate::credentials::sql(&app, &aged).await;
    }
    let engine = app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock));
    let before = time::OffsetDateTime::now_utc() - time::Duration::days(i64::try_from(days).expect("days"));
    engine.queue.prune(before).await.expect("prune");
    let left = feed(&app, &key).await;
    assert_eq!(left.iter().map(|e| e["id"].as_str().expect("id")).collect::<Vec<_>>(), [young]);
}

#[tokio::test]
async fn the_feed_filters_by_type_and_time_and_refuses_bad_input() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = channels(&app, &key, 2, "f").await;
    let res = app
        .authed(Method::PATCH, &format!("/v1/channels/{}", ch[0]), &key)
        .json(&json!({"display_name": "Renamed"}))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    assert_eq!(feed(&app, &key).await.len(), 3);

    let (updates, _) = feed_from(&app, &key, None, "&type=channel.updated").await;
    assert_eq!(updates.len(), 1);
    assert_eq!(updates[0]["data"]["id"], ch[0]);
    let (none, _) = feed_from(&app, &key, None, "&since=2999-01-01T00:00:00Z").await;
    assert!(none.is_empty());
    let (all, _) = feed_from(&app, &key, None, "&since=2000-01-01T00:00:00Z").await;
    assert_eq!(all.len(), 3);

    for (query, field) in [
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("cursor=nope", "cursor"),
        ("type=message.exploded", "type"),
        ("type=webhook.test", "type"),
        ("since=yesterday", "since"),
    ] {
        let res = app.authed(Method::GET, &format!("/v1/events?{query}"), &key).send().await.expect("request");
        let p = problem(res, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), [field], "{query}");
    }
}

/// A window that starts at an event's own `timestamp` includes it, however long its transaction
/// ran before recording it: the window compared the transaction's start, so an event recorded late
/// in a long transaction fell before its own timestamp.
#[tokio::test]
async fn since_an_events_timestamp_includes_that_event() {
    use diesel_async::RunQueryDsl;
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query("BEGIN").execute(&mut conn).await.expect("begin");
    diesel::sql_query("SELECT pg_sleep(0.2)").execute(&mut conn).await.expect("a long transaction");
    let event = crate::webhooks_delivery::event_of(EventType::ChannelCreated, &json!({"id": 77}));
    let ws_id = domain::workspace::WorkspaceId(ws.id);
    adapters_postgres::webhooks::outbox::record(&mut conn, ws_id, time::OffsetDateTime::now_utc(), &[event])
        .await
        .expect("record");
    diesel::sql_query("COMMIT").execute(&mut conn).await.expect("commit");
    let all = feed(&app, &key).await;
    let recorded = all.iter().find(|e| e["data"]["id"] == 77).expect("the event").clone();
    let at = recorded["timestamp"].as_str().expect("timestamp").replace('+', "%2B");
    let (from, _) = feed_from(&app, &key, None, &format!("&since={at}")).await;
    assert_eq!(<[Value]>::first(&from).map(|e| e["id"].clone()), Some(recorded["id"].clone()), "since={at}");
}

#[tokio::test]
async fn the_feed_needs_events_read_and_an_admin() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let without = app.api_key_with_scopes(&ws, &["webhooks:read"]).await;
    let res = app.authed(Method::GET, "/v1/events", &without).send().await.expect("request");
    problem(res, 403, "insufficient_scope").await;
    let with = app.api_key_with_scopes(&ws, &["events:read"]).await;
    assert_eq!(app.get_json("/v1/events", &with).await.0, 200);
}

#[tokio::test]
async fn a_replay_after_inactivity_delivers_exactly_the_missed_events_once_in_order() {
    let app = TestApp::spawn_with(one_at_a_time).await;
    let receiver = Receiver::start().await;
    let (_, key) = app.advanced_with_key().await;
    let start = time::OffsetDateTime::now_utc() - time::Duration::seconds(5);
    let (id, secret) = destination(&app, &key, &receiver.url("/r"), &["channel.created"]).await;
    let workers = app::webhooks::start(
        &app.settings,
        app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
    );
    channels(&app, &key, 1, "before").await;
    receiver.wait_for(1, Duration::from_secs(10)).await;

    let patch = |active: bool| {
        app.authed(Method::PATCH, &format!("/v1/webhooks/{id}"), &key).json(&json!({"active": active})).send()
    };
    assert_eq!(patch(false).await.expect("request").status(), 200);
    let missed = channels(&app, &key, 3, "missed").await;
    assert_eq!(patch(true).await.expect("request").status(), 200);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.received().len(), 1, "inactive: nothing was queued for it");

    let since = start.format(&time::format_description::well_known::Rfc3339).expect("format");
    let res = app.post_json(&format!("/v1/webhooks/{id}/replay"), &key, &json!({"since": since})).await;
    assert_eq!(res.status(), 202);
    assert_eq!(res.json::<Value>().await.expect("json"), json!({"queued": 3}));
    // Again at once: everything is on its way or received, so nothing more.
    let res = app.post_json(&format!("/v1/webhooks/{id}/replay"), &key, &json!({"since": since})).await;
    assert_eq!(res.json::<Value>().await.expect("json"), json!({"queued": 0}));

    let got = receiver.wait_for(4, Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    workers.stop(Duration::from_secs(5)).await;
    let got = if receiver.received().len() > got.len() { receiver.received() } else { got };
    assert_eq!(got.len(), 4, "the missed events once each, nothing else");
    let replayed: Vec<i64> = got[1..].iter().map(|r| r.json()["data"]["id"].as_i64().expect("id")).collect();
    assert_eq!(replayed, missed, "oldest first");
    // Same webhook-id as the feed; signatures verified by the standardwebhooks library.
    let events = feed(&app, &key).await;
    for r in &got[1..] {
        let id = r.header("webhook-id");
        assert!(events.iter().any(|e| e["id"] == id && e["data"] == r.json()["data"]), "{id} is a feed event");
    }
    let cases: Vec<(String, &crate::webhooks_receiver::Received)> = got.iter().map(|r| (secret.clone(), r)).collect();
    for v in crate::webhooks_verify::verify(&cases) {
        assert_eq!(v["ok"], true, "{v}");
    }
}

/// A delivery waiting for its next attempt (the receiver failed, the retry is minutes away) is
/// brought forward by a replay, once, instead of waiting for the schedule or being sent twice.
#[tokio::test]
async fn a_replay_brings_forward_what_waits_for_a_retry_without_sending_it_twice() {
    let app = TestApp::spawn_with(|s| {
        loopback(s);
        s.webhooks.retry_schedule = "600".into();
    })
    .await;
    let receiver = Receiver::start().await;
    let (_, key) = app.advanced_with_key().await;
    let start = time::OffsetDateTime::now_utc() - time::Duration::seconds(5);
    let (id, _) = destination(&app, &key, &receiver.url("/r"), &["channel.created"]).await;
    receiver.answer_next([Answer::status(500), Answer::status(500)]);
    let workers = app::webhooks::start(
        &app.settings,
        app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
    );
    let made = channels(&app, &key, 2, "retry").await;
    receiver.wait_for(2, Duration::from_secs(10)).await;
    // Both failed once; their retries are ten minutes away.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let since = start.format(&time::format_description::well_known::Rfc3339).expect("format");
    let res = app.post_json(&format!("/v1/webhooks/{id}/replay"), &key, &json!({"since": since})).await;
    assert_eq!(res.status(), 202);
    assert_eq!(res.json::<Value>().await.expect("json"), json!({"queued": 2}));
    let got = receiver.wait_for(4, Duration::from_secs(10)).await;
    // Brought forward, not queued again: a second replay finds them on their way.
    let res = app.post_json(&format!("/v1/webhooks/{id}/replay"), &key, &json!({"since": since})).await;
    assert_eq!(res.json::<Value>().await.expect("json"), json!({"queued": 0}));
    tokio::time::sleep(Duration::from_millis(500)).await;
    workers.stop(Duration::from_secs(5)).await;
    assert_eq!(receiver.received().len(), 4, "each event failed once and was received once");
    // Brought forward, they keep their own turn: this destination orders nothing (`none`), so the
    // two retries may arrive either way round, as live deliveries may.
    let mut again: Vec<i64> = got[2..].iter().map(|r| r.json()["data"]["id"].as_i64().expect("id")).collect();
    again.sort_unstable();
    assert_eq!(again, made, "each event again, once");
    let mut first: Vec<&str> = got[..2].iter().map(|r| r.header("webhook-id")).collect();
    let mut second: Vec<&str> = got[2..].iter().map(|r| r.header("webhook-id")).collect();
    first.sort_unstable();
    second.sort_unstable();
    assert_eq!(first, second, "the same deliveries, the same webhook-ids");
}

/// With the default pace (many deliveries at once), a replay still reaches the destination in feed
/// order, each event once the one before was answered: a slow first answer lets nothing overtake it.
#[tokio::test]
async fn a_replay_arrives_oldest_first_at_the_default_pace() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (_, key) = app.advanced_with_key().await;
    let start = time::OffsetDateTime::now_utc() - time::Duration::seconds(5);
    let (id, _) = destination(&app, &key, &receiver.url("/r"), &["channel.created"]).await;
    let patch = |active: bool| {
        app.authed(Method::PATCH, &format!("/v1/webhooks/{id}"), &key).json(&json!({"active": active})).send()
    };
    assert_eq!(patch(false).await.expect("request").status(), 200);
    let missed = channels(&app, &key, 12, "order").await;
    assert_eq!(patch(true).await.expect("request").status(), 200);
    receiver.answer_next([Answer { delay: Duration::from_millis(400), ..Answer::status(204) }]);
    let workers = app::webhooks::start(
        &app.settings,
        app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
    );
    let since = start.format(&time::format_description::well_known::Rfc3339).expect("format");
    let res = app.post_json(&format!("/v1/webhooks/{id}/replay"), &key, &json!({"since": since})).await;
    assert_eq!(res.json::<Value>().await.expect("json"), json!({"queued": 12}));
    let got = receiver.wait_for(12, Duration::from_secs(20)).await;
    workers.stop(Duration::from_secs(5)).await;
    let arrived: Vec<i64> = got.iter().map(|r| r.json()["data"]["id"].as_i64().expect("id")).collect();
    assert_eq!(arrived, missed, "oldest first, one after another");
    assert_eq!(receiver.max_concurrent(), 1, "never two of a replay at once");
}

#[tokio::test]
async fn a_replay_to_a_filtered_destination_sends_only_its_channels_events_in_each_threads_turn() {
    let app = TestApp::spawn_with(one_at_a_time).await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let start = time::OffsetDateTime::now_utc() - time::Duration::seconds(5);
    let a = app.channel(&key, "whatsapp", "+14155550130", "active").await;
    let b = app.channel(&key, "whatsapp", "+14155550131", "active").await;
    let body = json!({"url": receiver.url("/"), "events": ["message.created"],
                      "filter": {"channel_ids": [a]}, "ordering": "per_thread"});
    let res = app.post_json("/v1/webhooks", &key, &body).await;
    assert_eq!(res.status(), 201);
    let id = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    let patch = |active: bool| {
        app.authed(Method::PATCH, &format!("/v1/webhooks/{id}"), &key).json(&json!({"active": active})).send()
    };
    assert_eq!(patch(false).await.expect("request").status(), 200);
    let msg = |id: i64, thread: i64, channel: i64| json!({"id": id, "thread_id": thread, "channel_id": channel});
    for (m, thread, channel) in [(1, 100, a), (2, 100, a), (3, 200, b), (4, 300, a)] {
        emit(&app, ws.id, EventType::MessageCreated, msg(m, thread, channel)).await;
    }
    assert_eq!(patch(true).await.expect("request").status(), 200);

    let since = start.format(&time::format_description::well_known::Rfc3339).expect("format");
    let res = app.post_json(&format!("/v1/webhooks/{id}/replay"), &key, &json!({"since": since})).await;
    assert_eq!(res.status(), 202);
    assert_eq!(res.json::<Value>().await.expect("json"), json!({"queued": 3}), "channel b's event is filtered out");
    let res = app.post_json(&format!("/v1/webhooks/{id}/replay"), &key, &json!({"since": since})).await;
    assert_eq!(res.json::<Value>().await.expect("json"), json!({"queued": 0}));

    // Thread 100's first event fails: its second waits for the retry, thread 300 is not held.
    receiver.answer_next([Answer::status(500)]);
    let clock = TestClock::new();
    let engine = app::webhooks::engine(&app.settings, &app.db, Arc::new(clock.clone()));
    for _ in 0..3 {
        app::webhooks::run_once(&engine, 10).await.expect("run");
    }
    let ids =
        |r: &Receiver| r.received().iter().map(|r| r.json()["data"]["id"].as_i64().unwrap_or(0)).collect::<Vec<_>>();
    assert_eq!(ids(&receiver), [1, 4], "oldest first; 2 waits for 1, 3 is another channel's");
    clock.advance(time::Duration::seconds(10));
    for _ in 0..3 {
        app::webhooks::run_once(&engine, 10).await.expect("run");
    }
    assert_eq!(ids(&receiver)[2..], [1, 2], "1 succeeded, then 2");
}

#[tokio::test]
async fn a_replay_never_sends_a_destination_its_own_health_events() {
    let app = TestApp::spawn_with(loopback).await;
    let (ws, key) = app.advanced_with_key().await;
    let start = time::OffsetDateTime::now_utc() - time::Duration::seconds(5);
    let events = ["webhook.failing", "webhook.recovered"];
    let (own, _) = destination(&app, &key, "http://127.0.0.1:9/own", &events).await;
    let (other, _) = destination(&app, &key, "http://127.0.0.1:9/other", &events).await;
    // Each destination's failing and recovered: live, each reaches only the other one.
    for (kind, about) in
        [(EventType::WebhookFailing, own), (EventType::WebhookRecovered, own), (EventType::WebhookFailing, other)]
    {
        emit(&app, ws.id, kind, json!({"id": about})).await;
    }
    let since = start.format(&time::format_description::well_known::Rfc3339).expect("format");
    let replay = |id: i64| {
        let (app, since) = (&app, since.clone());
        let key = key.clone();
        async move {
            // Everything queued live is on its way: cancel it, so the replay looks at every event.
            let mut conn = app.db.conn().await.expect("conn");
            diesel_async::RunQueryDsl::execute(
                diesel::sql_query(format!("DELETE FROM webhook_deliveries WHERE destination_id = {id}")),
                &mut conn,
            )
            .await
            .expect("delete");
            let res = app.post_json(&format!("/v1/webhooks/{id}/replay"), &key, &json!({"since": since})).await;
            assert_eq!(res.status(), 202);
            res.json::<Value>().await.expect("json")["queued"].as_i64().expect("queued")
        }
    };
    assert_eq!(replay(own).await, 1, "only the other destination's failing");
    assert_eq!(replay(other).await, 2, "own's failing and recovered");
}

#[tokio::test]
async fn replay_input_is_validated_and_another_workspaces_destination_is_not_found() {
    let app = TestApp::spawn_with(loopback).await;
    let (_, key) = app.advanced_with_key().await;
    let (id, _) = destination(&app, &key, "http://127.0.0.1:9/x", &["channel.created"]).await;
    for (body, fields) in [
        (json!({}), vec!["since"]),
        (json!({"since": "last week"}), vec!["since"]),
        (json!({"since": "2026-11-24T08:00:00Z", "until": "2026-11-24T07:00:00Z"}), vec!["until"]),
        (json!({"since": "2026-11-24T08:00:00Z", "event_types": ["message.exploded"]}), vec!["event_types"]),
        (json!({"since": "2026-11-24T08:00:00Z", "event_types": []}), vec!["event_types"]),
        (json!({"since": "2026-11-24T08:00:00Z", "colour": "red"}), vec!["colour"]),
    ] {
        let p =
            problem(app.post_json(&format!("/v1/webhooks/{id}/replay"), &key, &body).await, 422, "validation_failed")
                .await;
        assert_eq!(error_fields(&p), fields, "{body}");
    }
    let (_, other) = app.advanced_with_key().await;
    let res =
        app.post_json(&format!("/v1/webhooks/{id}/replay"), &other, &json!({"since": "2026-11-24T08:00:00Z"})).await;
    problem(res, 404, "not_found").await;
}
