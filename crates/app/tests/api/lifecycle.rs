//! The conversation's lifecycle: statuses and snoozes, reopening on a contact's
//! message, the snooze timer across instances and restarts, who sent each message, and
//! assignment by team policy.

use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{error_fields, problem, test_template, TestApp};

mod assignment;
mod bench;
mod migration;
mod queue_migration;
mod senders;
mod snooze;

pub(crate) async fn patch(app: &TestApp, key: &str, path: &str, body: Value) -> reqwest::Response {
    app.authed(Method::PATCH, path, key).json(&body).send().await.expect("request")
}

/// A new thread (a first message to a new recipient on `channel`: a template, as the service
/// window requires).
pub(crate) async fn new_thread(app: &TestApp, key: &str, channel: i64, to: &str) -> i64 {
    let body = json!({"channel_id": channel, "content": "Hi", "to": to, "template": test_template()});
    let res = app.post_json("/v1/messages", key, &body).await;
    assert_eq!(res.status(), 201);
    res.json::<Value>().await.expect("json")["thread_id"].as_i64().expect("thread id")
}

pub(crate) async fn thread(app: &TestApp, key: &str, id: i64) -> Value {
    let (status, t) = app.get_json(&format!("/v1/threads/{id}"), key).await;
    assert_eq!(status, 200);
    t
}

#[derive(QueryableByName)]
pub(crate) struct Event {
    #[diesel(sql_type = Text)]
    pub(crate) event_type: String,
    #[diesel(sql_type = Text)]
    pub(crate) payload: String,
}

/// The `thread.*` events recorded for thread `id`, oldest first: `(type, data)`.
pub(crate) async fn thread_events(app: &TestApp, id: i64) -> Vec<(String, Value)> {
    let mut conn = app.db.conn().await.expect("conn");
    let rows: Vec<Event> = diesel::sql_query(
        "SELECT event_type, payload FROM webhook_events
         WHERE event_type LIKE 'thread.%' AND (payload::jsonb -> 'data' ->> 'id')::bigint = $1 ORDER BY id",
    )
    .bind::<BigInt, _>(id)
    .load(&mut conn)
    .await
    .expect("events");
    rows.into_iter()
        .map(|e| {
            let p: Value = serde_json::from_str(&e.payload).expect("payload");
            (e.event_type, p["data"].clone())
        })
        .collect()
}

/// A new active member of `ws` (an agent), by id.
pub(crate) async fn add_agent(app: &TestApp, ws: i64) -> i64 {
    #[derive(QueryableByName)]
    struct Id {
        #[diesel(sql_type = BigInt)]
        id: i64,
    }
    let mut conn = app.db.conn().await.expect("conn");
    let email = format!("agent-{ws}-{}@test.wms", rand::random::<u64>());
    let id: Id =
        diesel::sql_query("INSERT INTO users (email, name, password_hash) VALUES ($1, 'Agent', 'x') RETURNING id")
            .bind::<Text, _>(&email)
            .get_result(&mut conn)
            .await
            .expect("user");
    diesel::sql_query("INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, 'agent')")
        .bind::<BigInt, _>(ws)
        .bind::<BigInt, _>(id.id)
        .execute(&mut conn)
        .await
        .expect("member");
    id.id
}

#[tokio::test]
async fn every_status_transition_emits_one_event_with_its_reason() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let id = new_thread(&app, &key, ch, "+14155550123").await;
    let t = thread(&app, &key, id).await;
    assert_eq!((&t["status"], &t["status_reason"], &t["snoozed_until"]), (&json!("open"), &Value::Null, &Value::Null));
    assert_eq!((&t["team_id"], &t["assigned_at"], &t["assignment_reason"]), (&Value::Null, &Value::Null, &Value::Null));

    let until = (time::OffsetDateTime::now_utc() + time::Duration::days(2)).replace_nanosecond(0).expect("time");
    let until = until.format(&time::format_description::well_known::Rfc3339).expect("format");
    let path = format!("/v1/threads/{id}");
    let steps = [
        json!({"status": "pending"}),
        json!({"status": "snoozed", "snoozed_until": until}),
        json!({"status": "snoozed", "snoozed_until": until}),
        json!({"status": "snoozed"}),
        json!({"status": "resolved"}),
        json!({"status": "open"}),
        json!({"status": "open"}),
    ];
    for body in &steps {
        let res = patch(&app, &key, &path, body.clone()).await;
        assert_eq!(res.status(), 200, "{body}");
        let t: Value = res.json().await.expect("json");
        assert_eq!(t["status"], body["status"]);
        assert_eq!(t["status_reason"], "manual");
        let expected_until = if body.get("snoozed_until").is_some() { json!(until) } else { Value::Null };
        assert_eq!(t["snoozed_until"], expected_until, "{body}");
    }
    let events = thread_events(&app, id).await;
    let changes: Vec<(&str, &str)> = events
        .iter()
        .filter(|(ty, _)| ty == "thread.status_changed")
        .map(|(_, d)| (d["status"].as_str().unwrap_or(""), d["status_reason"].as_str().unwrap_or("")))
        .collect();
    // The same status again (and the same snooze time) is no change: five changes, five events.
    assert_eq!(
        changes,
        [
            ("pending", "manual"),
            ("snoozed", "manual"),
            ("snoozed", "manual"),
            ("resolved", "manual"),
            ("open", "manual")
        ]
    );
}

#[tokio::test]
async fn bad_status_changes_name_the_field_and_change_nothing() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let id = new_thread(&app, &key, ch, "+14155550123").await;
    let fmt = |d: time::Duration| {
        (time::OffsetDateTime::now_utc() + d).format(&time::format_description::well_known::Rfc3339).expect("format")
    };
    let path = format!("/v1/threads/{id}");
    for (body, field) in [
        (json!({"status": "snoozed", "snoozed_until": fmt(-time::Duration::minutes(1))}), "snoozed_until"),
        (json!({"status": "snoozed", "snoozed_until": fmt(time::Duration::days(366))}), "snoozed_until"),
        (json!({"status": "snoozed", "snoozed_until": "next tuesday"}), "snoozed_until"),
        (json!({"status": "pending", "snoozed_until": fmt(time::Duration::days(1))}), "snoozed_until"),
        (json!({"snoozed_until": fmt(time::Duration::days(1))}), "snoozed_until"),
        (json!({"status": "closed"}), "status"),
        (json!({"status": "custom_status"}), "status"),
    ] {
        let p = problem(patch(&app, &key, &path, body.clone()).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), [field], "{body}");
    }
    let t = thread(&app, &key, id).await;
    assert_eq!((&t["status"], &t["status_reason"], &t["snoozed_until"]), (&json!("open"), &Value::Null, &Value::Null));
    assert!(thread_events(&app, id).await.iter().all(|(ty, _)| ty == "thread.created"), "nothing emitted");
    // The listing's filter takes the known statuses only.
    let (status, p) = app.get_json("/v1/threads?status=custom_status", &key).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["status".to_owned()]));
}

#[tokio::test]
async fn a_contacts_message_reopens_pending_snoozed_and_resolved_threads() {
    use crate::connectors::{callback, spawn, wa_inbound, whatsapp_channel, Graph};
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    whatsapp_channel(&app, &key, "pn-30").await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    assert_eq!(
        callback(&app, "whatsapp", &wa_inbound("pn-30", "wamid.a", "14155550123", "hi", now), None).await.status(),
        200
    );
    let (_, list) = app.get_json("/v1/threads", &key).await;
    let id = list["data"][0]["id"].as_i64().expect("thread");
    let path = format!("/v1/threads/{id}");
    for (n, status) in ["pending", "snoozed", "resolved"].into_iter().enumerate() {
        assert_eq!(patch(&app, &key, &path, json!({"status": status})).await.status(), 200);
        let body = wa_inbound("pn-30", &format!("wamid.{n}"), "14155550123", "again", now + 1 + n as i64);
        assert_eq!(callback(&app, "whatsapp", &body, None).await.status(), 200);
        let t = thread(&app, &key, id).await;
        assert_eq!((&t["status"], &t["status_reason"]), (&json!("open"), &json!("contact_replied")), "{status}");
    }
    // One more message on an open thread changes no status.
    let body = wa_inbound("pn-30", "wamid.z", "14155550123", "still there?", now + 10);
    assert_eq!(callback(&app, "whatsapp", &body, None).await.status(), 200);
    let reasons: Vec<String> = thread_events(&app, id)
        .await
        .into_iter()
        .filter(|(ty, _)| ty == "thread.status_changed")
        .map(|(_, d)| d["status_reason"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(reasons, ["manual", "contact_replied", "manual", "contact_replied", "manual", "contact_replied"]);
}

#[tokio::test]
async fn an_inbound_message_is_dated_by_the_platform_never_after_its_receipt() {
    use crate::connectors::{callback, spawn, wa_inbound, whatsapp_channel, Graph};
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    whatsapp_channel(&app, &key, "pn-31").await;
    let sent = time::OffsetDateTime::now_utc().unix_timestamp() - 3600;
    callback(&app, "whatsapp", &wa_inbound("pn-31", "wamid.old", "14155550123", "an hour ago", sent), None).await;
    let before = time::OffsetDateTime::now_utc();
    let ahead = before.unix_timestamp() + 7200;
    callback(&app, "whatsapp", &wa_inbound("pn-31", "wamid.ahead", "14155550123", "from the future", ahead), None)
        .await;
    let (_, list) = app.get_json("/v1/messages", &key).await;
    let at = |i: usize| {
        time::OffsetDateTime::parse(
            list["data"][i]["created_at"].as_str().expect("time"),
            &time::format_description::well_known::Rfc3339,
        )
        .expect("rfc3339")
    };
    // Newest first: the message whose platform time is ahead of ours is dated at its receipt.
    assert_eq!(at(1).unix_timestamp(), sent);
    assert!(at(0) >= before - time::Duration::seconds(1) && at(0) <= time::OffsetDateTime::now_utc(), "{list}");
    assert_eq!(list["data"][0]["sender"]["type"], "contact");
}
