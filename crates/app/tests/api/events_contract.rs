//! Events as a contract: every event type, generated through the code paths that emit it (REST
//! API, platform callbacks, the connector and delivery workers), matches its payload schema in
//! the OpenAPI document's `webhooks`, and its `data` equals the REST record fetched right after.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::connectors::{callback, dispatch, send, wa_inbound, wa_status, whatsapp_channel, Graph};
use crate::events_helpers::{assert_valid, feed, webhook_validators};
use crate::helpers::TestApp;
use crate::webhooks_receiver::{Answer, Receiver};

/// The newest event of `kind` in the feed.
async fn last(app: &TestApp, key: &str, kind: &str) -> Value {
    feed(app, key).await.into_iter().rev().find(|e| e["type"] == kind).unwrap_or_else(|| panic!("a {kind} event"))
}

/// The newest `kind` event's data equals `GET path` now.
async fn same_as_rest(app: &TestApp, key: &str, kind: &str, path: &str) -> Value {
    let event = last(app, key, kind).await;
    let (status, record) = app.get_json(path, key).await;
    assert_eq!(status, 200, "{path}");
    assert_eq!(event["data"], record, "{kind}: data is the REST record of {path}");
    event
}

/// The newest `kind` event's data equals `GET {collection}/{its data's id}` now.
async fn same_as_rest_by_id(app: &TestApp, key: &str, kind: &str, collection: &str) -> Value {
    let id = last(app, key, kind).await["data"]["id"].clone();
    same_as_rest(app, key, kind, &format!("{collection}/{id}")).await
}

#[tokio::test]
async fn every_event_type_matches_its_schema_and_the_rest_record_from_every_code_path() {
    let graph = Graph::start();
    let graph_url = graph.url.clone();
    let app = TestApp::spawn_with(move |s| {
        s.connectors.graph_base_url = graph_url;
        s.connectors.workers = 0;
        crate::webhooks_delivery::loopback(s);
    })
    .await;
    let (ws, key) = app.advanced_with_key().await;

    // REST: channels.
    let ch = whatsapp_channel(&app, &key, "pn-contract").await;
    same_as_rest(&app, &key, "channel.created", &format!("/v1/channels/{ch}")).await;
    let res = app
        .authed(Method::PATCH, &format!("/v1/channels/{ch}"), &key)
        .json(&json!({"display_name": "Renamed"}))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    let e = same_as_rest(&app, &key, "channel.updated", &format!("/v1/channels/{ch}")).await;
    assert!(e["data"].get("credentials").is_none(), "never credentials");

    // REST: a message to a new address makes contact, thread and message.
    let m = send(
        &app,
        &key,
        json!({"channel_id": ch, "content": "Hi", "to": "+14155550123", "template": crate::helpers::test_template()}),
    )
    .await;
    let thread = m["thread_id"].as_i64().expect("thread");
    same_as_rest(&app, &key, "thread.created", &format!("/v1/threads/{thread}")).await;
    same_as_rest(&app, &key, "message.created", &format!("/v1/messages/{}", m["id"])).await;

    // Callback: Meta pauses a template of the channel's WhatsApp Business Account.
    {
        use diesel_async::RunQueryDsl;
        let mut conn = app.db.conn().await.expect("conn");
        diesel::sql_query(format!("UPDATE channels SET waba_id = 'waba-contract' WHERE id = {ch}"))
            .execute(&mut conn)
            .await
            .expect("waba");
    }
    let paused =
        crate::service_window::template_status_update("waba-contract", crate::helpers::TEST_TEMPLATE, "PAUSED");
    assert_eq!(callback(&app, "whatsapp", &paused, None).await.status(), 200);
    let e = feed(&app, &key).await.into_iter().rev().find(|e| e["type"] == "template.status_updated").expect("event");
    let (_, listed) = app.get_json(&format!("/v1/channels/{ch}/templates"), &key).await;
    let mut expected = listed["data"][0].clone();
    expected["channel_id"] = json!(ch);
    assert_eq!(e["data"], expected, "the template record and its channel");

    // Connector worker, then a status callback.
    dispatch(&app).await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    callback(&app, "whatsapp", &wa_status("pn-contract", "wamid.1", "delivered", now), None).await;
    same_as_rest(&app, &key, "message.status_updated", &format!("/v1/messages/{}", m["id"])).await;

    // REST: thread status and assignment (the same record, no extra members).
    let res = app
        .authed(Method::PATCH, &format!("/v1/threads/{thread}"), &key)
        .json(&json!({"status": "resolved", "assignee": {"type": "user", "id": ws.admin_id}}))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    same_as_rest(&app, &key, "thread.assigned", &format!("/v1/threads/{thread}")).await;
    let api_change = same_as_rest(&app, &key, "thread.status_changed", &format!("/v1/threads/{thread}")).await;
    assert_eq!(api_change["data"]["status"], "resolved");

    // Callback: the contact writes again, which names the contact and reopens the thread.
    callback(&app, "whatsapp", &wa_inbound("pn-contract", "wamid.in1", "14155550123", "Thanks", now + 1), None).await;
    let callback_change = same_as_rest(&app, &key, "thread.status_changed", &format!("/v1/threads/{thread}")).await;
    assert_eq!(callback_change["data"]["status"], "open");
    let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
    assert_eq!(keys(&api_change["data"]), keys(&callback_change["data"]), "one shape from the API and a callback");
    let updated = last(&app, &key, "contact.updated").await;
    assert_eq!(updated["data"]["name"], "Dana Ortiz");

    // Callback: a new sender makes contact, thread and message on the connector path.
    callback(&app, "whatsapp", &wa_inbound("pn-contract", "wamid.in2", "14155550188", "Hello?", now + 2), None).await;
    let t = same_as_rest_by_id(&app, &key, "thread.created", "/v1/threads").await;
    assert_ne!(t["data"]["id"], thread, "a new thread");
    assert!(t["data"]["last_message_at"].is_string(), "the connector's thread.created is the whole record");
    let inbound = same_as_rest_by_id(&app, &key, "message.created", "/v1/messages").await;
    assert_eq!((&inbound["data"]["direction"], &inbound["data"]["thread_id"]), (&json!("inbound"), &t["data"]["id"]));
    let contact = last(&app, &key, "contact.created").await;
    assert_eq!(contact["data"]["phone"], "+14155550188");

    // REST: a thread's labels replaced; the record carries the new set.
    let label = app.post_json("/v1/labels", &key, &json!({"name": "vip", "color": "#b45309"})).await;
    assert_eq!(label.status(), 201);
    let res = app
        .authed(Method::PUT, &format!("/v1/threads/{thread}/labels"), &key)
        .json(&json!({"labels": ["vip"]}))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    let labelled = same_as_rest(&app, &key, "thread.labels_changed", &format!("/v1/threads/{thread}")).await;
    assert_eq!(labelled["data"]["labels"], json!(["vip"]));

    // Callback: under an SLA policy, a contact's message dated two minutes ago is already past
    // its first response target: `sla.breached` at once, with the thread.
    let sla = crate::sla::policy(&app, &key, json!({"name": "Minute", "first_response_seconds": 60})).await;
    callback(&app, "whatsapp", &wa_inbound("pn-contract", "wamid.in3", "14155550177", "Anyone?", now - 120), None)
        .await;
    let late = last(&app, &key, "sla.breached").await;
    let late_thread = late["data"]["id"].as_i64().expect("thread id");
    let breached = same_as_rest(&app, &key, "sla.breached", &format!("/v1/threads/{late_thread}")).await;
    assert_eq!(breached["data"]["sla"]["breaches"], json!(["first_response"]));
    let res =
        app.authed(Method::DELETE, &format!("/v1/sla-policies/{}", sla["id"]), &key).send().await.expect("request");
    assert_eq!(res.status(), 204);

    // REST: a contact created through the API, then erased: `contact.deleted` carries the id only.
    let res = app.post_json("/v1/contacts", &key, &json!({"name": "Eve Adams", "email": "eve@example.com"})).await;
    assert_eq!(res.status(), 201);
    let created: Value = res.json().await.expect("json");
    same_as_rest(&app, &key, "contact.created", &format!("/v1/contacts/{}", created["id"])).await;
    let res =
        app.authed(Method::DELETE, &format!("/v1/contacts/{}", created["id"]), &key).send().await.expect("request");
    assert_eq!(res.status(), 204);
    let deleted = last(&app, &key, "contact.deleted").await;
    assert_eq!(deleted["data"], json!({"id": created["id"]}));

    // Worker: a destination answering 410 is deactivated; the other destination hears of it.
    let gone = Receiver::start().await;
    gone.answer_always(Answer::status(410));
    let watcher = Receiver::start().await;
    let (gone_id, _) =
        crate::webhooks_delivery::destination(&app, &key, &gone.url("/gone"), &["channel.created"]).await;
    let (_, watcher_secret) =
        crate::webhooks_delivery::destination(&app, &key, &watcher.url("/w"), &["webhook.disabled"]).await;
    let workers = app::webhooks::start(
        &app.settings,
        app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
    );
    app.channel(&key, "messenger", "page-contract", "active").await;
    let got = watcher.wait_for(1, Duration::from_secs(20)).await;
    workers.stop(Duration::from_secs(5)).await;
    let disabled = same_as_rest(&app, &key, "webhook.disabled", &format!("/v1/webhooks/{gone_id}")).await;
    assert_eq!(disabled["data"]["active"], false);
    assert!(disabled["data"]["disabled_reason"].as_str().is_some_and(|r| r.contains("410")), "{disabled}");
    assert_eq!(got.len(), 1, "the watcher got webhook.disabled once");
    assert_eq!(got[0].header("webhook-id"), disabled["id"].as_str().expect("id"), "feed id = webhook-id");
    let secret = domain::webhooks::signing::SigningSecret::parse(&watcher_secret).expect("secret");
    let ts: i64 = got[0].header("webhook-timestamp").parse().expect("ts");
    assert_eq!(got[0].header("webhook-signature"), secret.sign(got[0].header("webhook-id"), ts, &got[0].body));
    assert!(gone.received().iter().all(|r| r.json()["type"] != "webhook.disabled"), "not to the disabled one");

    // Health: 4 failed attempts in a row make a destination failing, its next success recovered;
    // `data` is the destination record (its URL has no user-info, query or fragment to redact).
    let flaky = Receiver::start().await;
    flaky.answer_always(Answer::status(500));
    let (flaky_id, _) = crate::webhooks_delivery::destination(&app, &key, &flaky.url("/f"), &["channel.created"]).await;
    let test = format!("/v1/webhooks/{flaky_id}/test");
    for _ in 0..4 {
        assert_eq!(app.post_json(&test, &key, &json!({})).await.status(), 200);
    }
    same_as_rest(&app, &key, "webhook.failing", &format!("/v1/webhooks/{flaky_id}")).await;
    flaky.answer_always(Answer::status(204));
    assert_eq!(app.post_json(&test, &key, &json!({})).await.status(), 200);
    same_as_rest(&app, &key, "webhook.recovered", &format!("/v1/webhooks/{flaky_id}")).await;

    // Every event matches its schema in /v1/openapi.json, and every catalogue type occurred.
    let validators = webhook_validators(&app).await;
    let all = feed(&app, &key).await;
    for e in &all {
        assert_valid(&validators, e);
        assert_eq!(e["workspace_id"], ws.id);
        assert!(e["id"].as_str().is_some_and(|id| id.starts_with("msg_")));
    }
    assert_valid(&validators, &got[0].json());
    for kind in domain::webhooks::EventType::CATALOG.iter().copied() {
        assert!(all.iter().any(|e| e["type"] == kind.as_str()), "{kind} was generated");
    }
}

#[tokio::test]
async fn event_types_and_typed_test_events_follow_the_same_schemas() {
    let app = TestApp::spawn_with(crate::webhooks_delivery::loopback).await;
    let (_, key) = app.advanced_with_key().await;
    let (status, body) = app.get_json("/v1/event-types", &key).await;
    assert_eq!(status, 200);
    let types = body["data"].as_array().expect("data");
    let names: Vec<&str> = types.iter().filter_map(|t| t["name"].as_str()).collect();
    let catalog: Vec<&str> = domain::webhooks::EventType::CATALOG.iter().map(|e| e.as_str()).collect();
    assert_eq!(names, catalog);
    for t in types {
        assert!(t["description"].as_str().is_some_and(|d| !d.is_empty()));
        assert!(!t["schema"].to_string().contains("$ref"), "self-contained: {}", t["name"]);
        let v = jsonschema::validator_for(&t["schema"]).expect("schema");
        assert!(!v.is_valid(&json!({"type": t["name"], "timestamp": "x", "workspace_id": 1})), "data is required");
    }

    // A sample of every type, sent as a test event, is signed and matches its schema.
    let receiver = Receiver::start().await;
    let (id, secret) =
        crate::webhooks_delivery::destination(&app, &key, &receiver.url("/t"), &["message.created"]).await;
    let validators = webhook_validators(&app).await;
    let secret = domain::webhooks::signing::SigningSecret::parse(&secret).expect("secret");
    for (n, name) in catalog.iter().chain(&["webhook.test"]).enumerate() {
        let res = app.post_json(&format!("/v1/webhooks/{id}/test"), &key, &json!({"event_type": name})).await;
        assert_eq!(res.status(), 200, "{name}");
        let got = receiver.wait_for(n + 1, Duration::from_secs(10)).await;
        let r = &got[n];
        assert_eq!(r.json()["type"], *name);
        assert_valid(&validators, &r.json());
        let ts: i64 = r.header("webhook-timestamp").parse().expect("ts");
        assert_eq!(r.header("webhook-signature"), secret.sign(r.header("webhook-id"), ts, &r.body));
    }
    // Without a body: webhook.test, as before.
    let res = app.authed(Method::POST, &format!("/v1/webhooks/{id}/test"), &key).send().await.expect("request");
    assert_eq!(res.status(), 200);
    let got = receiver.wait_for(catalog.len() + 2, Duration::from_secs(10)).await;
    assert_eq!(got.last().expect("last").json()["type"], "webhook.test");
    // An unknown type is refused, naming the field; samples are never in the feed.
    let p = crate::helpers::problem(
        app.post_json(&format!("/v1/webhooks/{id}/test"), &key, &json!({"event_type": "message.exploded"})).await,
        422,
        "validation_failed",
    )
    .await;
    assert_eq!(crate::helpers::error_fields(&p), ["event_type"]);
    // A misspelt field is refused too, not read as "no type given".
    let p = crate::helpers::problem(
        app.post_json(&format!("/v1/webhooks/{id}/test"), &key, &json!({"event_typ": "message.created"})).await,
        422,
        "validation_failed",
    )
    .await;
    assert_eq!(crate::helpers::error_fields(&p), ["event_typ"]);
    let big = json!({"event_type": "webhook.test", "pad": "x".repeat(300 * 1024)});
    let res = app.post_json(&format!("/v1/webhooks/{id}/test"), &key, &big).await;
    crate::helpers::problem(res, 413, "payload_too_large").await;
    assert!(feed(&app, &key).await.is_empty(), "samples are not events of the workspace");
}
