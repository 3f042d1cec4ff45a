//! `/v1/messages`

use reqwest::Method;
use serde_json::json;

use crate::helpers::{error_fields, problem, TestApp};

async fn send(app: &TestApp, key: &str, body: serde_json::Value) -> (u16, serde_json::Value) {
    let res = app.post_json("/v1/messages", key, &body).await;
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(serde_json::Value::Null))
}

#[tokio::test]
async fn sending_to_a_new_number_queues_the_message_in_a_new_thread() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let res = app
        .post_json("/v1/messages", &key, &json!({"channel_id": ch, "content": "Hello!", "to": "+1 (415) 555-0123", "template": crate::helpers::test_template()}))
        .await;
    assert_eq!(res.status(), 201);
    let location = res.headers()["location"].to_str().expect("ascii").to_owned();
    let m: serde_json::Value = res.json().await.expect("json");
    assert_eq!(
        (m["status"].as_str(), m["direction"].as_str(), m["content"].as_str()),
        (Some("queued"), Some("outbound"), Some("Hello!"))
    );
    assert_eq!(location, format!("/v1/messages/{}", m["id"]));
    let keys: Vec<&String> = m.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["channel_id", "content", "created_at", "direction", "id", "sender", "status", "thread_id"]);
    let (status, fetched) = app.get_json(&location, &key).await;
    assert_eq!((status, fetched), (200, m.clone()));

    // Once the contact answers, free text to the same recipient lands in the same thread; a reply
    // by thread_id too.
    app.contact_wrote(ch, "+14155550123").await;
    let (_, again) = send(&app, &key, json!({"channel_id": ch, "content": "Still there?", "to": "+14155550123"})).await;
    assert_eq!(again["thread_id"], m["thread_id"]);
    let (status, reply) =
        send(&app, &key, json!({"channel_id": ch, "content": "Reply", "thread_id": m["thread_id"]})).await;
    assert_eq!((status, &reply["thread_id"]), (201, &m["thread_id"]));
    // A different number gets its own thread.
    let (_, other) = send(
        &app,
        &key,
        json!({"channel_id": ch, "content": "Hi", "to": "+14155550124", "template": crate::helpers::test_template()}),
    )
    .await;
    assert_ne!(other["thread_id"], m["thread_id"]);
}

#[tokio::test]
async fn messenger_recipients_are_platform_ids() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "messenger", "104829301928374", "active").await;
    app.contact_wrote(ch, "6543219876543210").await;
    let (status, _) = send(&app, &key, json!({"channel_id": ch, "content": "Hi", "to": "6543219876543210"})).await;
    assert_eq!(status, 201);
    let (status, p) = send(&app, &key, json!({"channel_id": ch, "content": "Hi", "to": "not valid!"})).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["to".to_owned()]));
}

#[tokio::test]
async fn invalid_sends_name_the_field() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    for (body, fields) in [
        (json!({"channel_id": ch, "content": "Hi"}), vec!["to"]),
        (json!({"channel_id": ch, "content": "", "to": "+14155550123"}), vec!["content"]),
        (json!({"channel_id": ch, "content": "x".repeat(4097), "to": "+14155550123"}), vec!["content"]),
        (json!({"channel_id": ch, "content": "Hi", "to": "4155550123"}), vec!["to"]),
        (json!({"channel_id": "one", "content": "Hi", "to": "+14155550123"}), vec!["channel_id"]),
        (json!({"content": "Hi", "to": "+14155550123"}), vec!["channel_id"]),
        (json!({"channel_id": ch, "content": "Hi", "to": "+14155550123", "priority": "high"}), vec!["priority"]),
    ] {
        let (status, p) = send(&app, &key, body.clone()).await;
        assert_eq!(
            (status, error_fields(&p)),
            (422, fields.iter().map(|f| (*f).to_owned()).collect::<Vec<_>>()),
            "{body}"
        );
    }
}

#[tokio::test]
async fn an_inactive_channel_is_a_conflict_and_a_foreign_one_not_found() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let off = app.channel(&key, "whatsapp", "+14155550101", "disconnected").await;
    let res =
        app.post_json("/v1/messages", &key, &json!({"channel_id": off, "content": "Hi", "to": "+14155550123"})).await;
    problem(res, 409, "conflict").await;
    let (_, other) = app.advanced_with_key().await;
    let foreign = app.channel(&other, "whatsapp", "+14155550101", "active").await;
    let res = app
        .post_json("/v1/messages", &key, &json!({"channel_id": foreign, "content": "Hi", "to": "+14155550123"}))
        .await;
    problem(res, 404, "not_found").await;
    // A thread of another workspace is not found either.
    let (_, m) = send(&app, &other, json!({"channel_id": foreign, "content": "Hi", "to": "+14155550123", "template": crate::helpers::test_template()})).await;
    let mine = app.channel(&key, "whatsapp", "+14155550102", "active").await;
    let res = app
        .post_json("/v1/messages", &key, &json!({"channel_id": mine, "content": "Hi", "thread_id": m["thread_id"]}))
        .await;
    problem(res, 404, "not_found").await;
    let res = app.authed(Method::GET, &format!("/v1/messages/{}", m["id"]), &key).send().await.expect("request");
    problem(res, 404, "not_found").await;
}

#[tokio::test]
async fn a_retried_post_with_the_same_idempotency_key_sends_once() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let body = json!({"channel_id": ch, "content": "Your code is 123456", "to": "+14155550123", "template": crate::helpers::test_template()});
    let post = |k: &'static str, b: serde_json::Value| {
        app.authed(Method::POST, "/v1/messages", &key).header("Idempotency-Key", k).json(&b).send()
    };
    let first = post("otp-1", body.clone()).await.expect("request");
    assert_eq!(first.status(), 201);
    assert!(first.headers().get("idempotent-replayed").is_none());
    let first: serde_json::Value = first.json().await.expect("json");
    let again = post("otp-1", body.clone()).await.expect("request");
    assert_eq!(again.status(), 201);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(again.json::<serde_json::Value>().await.expect("json"), first);
    let (_, list) = app.get_json(&format!("/v1/messages?channel_id={ch}"), &key).await;
    assert_eq!(list["data"].as_array().map(Vec::len), Some(1), "sent once");

    let changed =
        post("otp-1", json!({"channel_id": ch, "content": "Different", "to": "+14155550123", "template": crate::helpers::test_template()})).await.expect("request");
    problem(changed, 409, "conflict").await;

    // Concurrent retries: exactly one message.
    let futures: Vec<_> = (0..8).map(|_| post("burst", body.clone())).collect();
    let results = futures_util::future::join_all(futures).await;
    let mut ids: Vec<i64> = Vec::new();
    for r in results {
        let r = r.expect("request");
        assert_eq!(r.status(), 201);
        ids.push(r.json::<serde_json::Value>().await.expect("json")["id"].as_i64().expect("id"));
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "one message for one key: {ids:?}");
}

#[tokio::test]
async fn concurrent_sends_of_different_requests_with_one_key_store_one_and_refuse_the_others() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let body = |content: &str| json!({"channel_id": ch, "content": content, "to": "+14155550123", "template": crate::helpers::test_template()});
    // Both requests race for the key: whichever stores first owns it, and the other request is
    // refused even when it finds the key while the first is still being stored.
    let requests: Vec<_> = (0..8)
        .map(|i| {
            let content = if i % 2 == 0 { "First" } else { "Second" };
            let b = body(content);
            let key = &key;
            let app = &app;
            async move {
                let r = app
                    .authed(Method::POST, "/v1/messages", key)
                    .header("Idempotency-Key", "race")
                    .json(&b)
                    .send()
                    .await
                    .expect("request");
                let status = r.status().as_u16();
                let answer: serde_json::Value = r.json().await.expect("json");
                (content, status, answer)
            }
        })
        .collect();
    let answers = futures_util::future::join_all(requests).await;
    let stored: Vec<&(&str, u16, serde_json::Value)> = answers.iter().filter(|(_, s, _)| *s == 201).collect();
    let winner = stored.first().map(|(c, _, _)| *c).expect("one request stored");
    for (content, status, answer) in &answers {
        if *content == winner {
            assert_eq!(*status, 201, "{answer}");
            assert_eq!(answer["id"], stored[0].2["id"], "one message for the key");
        } else {
            assert_eq!((*status, answer["code"].as_str()), (409, Some("conflict")), "{answer}");
        }
    }
    let (_, list) = app.get_json(&format!("/v1/messages?channel_id={ch}"), &key).await;
    assert_eq!(list["data"].as_array().map(Vec::len), Some(1), "sent once");
}

#[tokio::test]
async fn listing_is_newest_first_filtered_and_stable_under_inserts() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let wa = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let ig = app.channel(&key, "instagram", "1784", "active").await;
    let mut sent = Vec::new();
    for i in 0..5 {
        let (_, m) =
            send(&app, &key, json!({"channel_id": wa, "content": format!("m{i}"), "to": "+14155550123", "template": crate::helpers::test_template()})).await;
        sent.push(m["id"].as_i64().expect("id"));
    }
    app.contact_wrote(ig, "u1").await;
    send(&app, &key, json!({"channel_id": ig, "content": "ig", "to": "u1"})).await;

    let (_, p1) = app.get_json(&format!("/v1/messages?channel_id={wa}&limit=2"), &key).await;
    let ids = |p: &serde_json::Value| {
        p["data"].as_array().expect("data").iter().filter_map(|m| m["id"].as_i64()).collect::<Vec<_>>()
    };
    assert_eq!(ids(&p1), [sent[4], sent[3]]);
    // A message arriving between pages does not shift the next page.
    send(
        &app,
        &key,
        json!({"channel_id": wa, "content": "late", "to": "+14155550123", "template": crate::helpers::test_template()}),
    )
    .await;
    let cursor = p1["next_cursor"].as_str().expect("cursor").to_owned();
    let (_, p2) = app.get_json(&format!("/v1/messages?channel_id={wa}&limit=2&cursor={cursor}"), &key).await;
    assert_eq!(ids(&p2), [sent[2], sent[1]]);
    let cursor = p2["next_cursor"].as_str().expect("cursor").to_owned();
    let (_, p3) = app.get_json(&format!("/v1/messages?channel_id={wa}&limit=2&cursor={cursor}"), &key).await;
    assert_eq!(ids(&p3), [sent[0]]);
    assert_eq!(p3["next_cursor"], json!(null));
    // The cursor is bound to the filters it was issued for.
    for other in [format!("channel_id={ig}"), String::new(), format!("channel_id={wa}&direction=outbound")] {
        let (status, p) = app.get_json(&format!("/v1/messages?{other}&limit=2&cursor={cursor}"), &key).await;
        assert_eq!((status, error_fields(&p)), (422, vec!["cursor".to_owned()]), "{other}");
    }

    let (_, q) = app.get_json("/v1/messages?status=queued&direction=outbound&limit=100", &key).await;
    assert_eq!(q["data"].as_array().map(Vec::len), Some(7));
    let (_, inbound) = app.get_json("/v1/messages?direction=inbound", &key).await;
    assert_eq!(inbound["data"].as_array().map(Vec::len), Some(1), "the Instagram contact's message");
    let (_, future) = app.get_json("/v1/messages?since=2999-01-01T00:00:00Z", &key).await;
    assert_eq!(future["data"], json!([]));
    let (_, past) = app.get_json("/v1/messages?until=2000-01-01T00:00:00Z", &key).await;
    assert_eq!(past["data"], json!([]));
    let (status, p) = app.get_json("/v1/messages?since=yesterday&limit=500", &key).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["limit".to_owned(), "since".to_owned()]));
    let (status, p) = app.get_json("/v1/messages?status=lost", &key).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["status".to_owned()]));
}

#[tokio::test]
async fn messages_need_credentials() {
    let app = TestApp::spawn().await;
    problem(app.get("/v1/messages").await, 401, "unauthenticated").await;
    problem(app.get("/v1/messages/1").await, 401, "unauthenticated").await;
}
