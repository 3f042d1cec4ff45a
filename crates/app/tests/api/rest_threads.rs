//! `/v1/threads/{thread_id}`: status and assignment, with their webhook events.

use diesel_async::RunQueryDsl;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{error_fields, problem, TestApp};

async fn patch(app: &TestApp, key: &str, id: &Value, body: Value) -> reqwest::Response {
    app.authed(Method::PATCH, &format!("/v1/threads/{id}"), key).json(&body).send().await.expect("request")
}

#[tokio::test]
async fn status_and_assignee_change_with_their_events() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let hook = app
        .post_json(
            "/v1/webhooks",
            &key,
            &json!({"url": "https://hooks.example.com/t", "platform": "custom",
        "events": ["thread.status_changed", "thread.assigned"]}),
        )
        .await;
    assert_eq!(hook.status(), 201);
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let m: Value = app
        .post_json("/v1/messages", &key, &json!({"channel_id": ch, "content": "Hi", "to": "+14155550123"}))
        .await
        .json()
        .await
        .expect("json");
    let thread = &m["thread_id"];

    let (status, t) = app.get_json(&format!("/v1/threads/{thread}"), &key).await;
    assert_eq!((status, &t["status"], &t["assignee"]), (200, &json!("open"), &Value::Null));

    let res =
        patch(&app, &key, thread, json!({"status": "resolved", "assignee": {"type": "user", "id": ws.admin_id}})).await;
    assert_eq!(res.status(), 200);
    let t: Value = res.json().await.expect("json");
    assert_eq!((&t["status"], &t["assignee"]), (&json!("resolved"), &json!({"type": "user", "id": ws.admin_id})));

    let mut conn = app.db.conn().await.expect("conn");
    #[derive(diesel::QueryableByName)]
    struct Id {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        id: i64,
    }
    let team: Id = diesel::sql_query("INSERT INTO teams (workspace_id, name) VALUES ($1, 'Tier 2') RETURNING id")
        .bind::<diesel::sql_types::BigInt, _>(ws.id)
        .get_result(&mut conn)
        .await
        .expect("team");
    let t: Value = patch(&app, &key, thread, json!({"assignee": {"type": "team", "id": team.id}}))
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(t["assignee"], json!({"type": "team", "id": team.id}));
    let t: Value = patch(&app, &key, thread, json!({"assignee": null})).await.json().await.expect("json");
    assert_eq!(t["assignee"], Value::Null);
    // The same values again change nothing and emit nothing.
    patch(&app, &key, thread, json!({"status": "resolved", "assignee": null})).await;

    #[derive(diesel::QueryableByName)]
    struct E {
        #[diesel(sql_type = diesel::sql_types::Text)]
        event_type: String,
    }
    let events: Vec<E> =
        // Every event is kept now (the events feed); these are the thread changes.
        diesel::sql_query(
            "SELECT event_type FROM webhook_events \
             WHERE event_type IN ('thread.status_changed', 'thread.assigned') ORDER BY id",
        )
        .load(&mut conn)
        .await
        .expect("events");
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(types, ["thread.status_changed", "thread.assigned", "thread.assigned", "thread.assigned"]);
}

#[tokio::test]
async fn assignees_must_belong_to_the_workspace_and_fields_are_validated() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let other = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let m: Value = app
        .post_json("/v1/messages", &key, &json!({"channel_id": ch, "content": "Hi", "to": "+14155550123"}))
        .await
        .json()
        .await
        .expect("json");
    let thread = &m["thread_id"];
    for (body, field) in [
        (json!({"assignee": {"type": "user", "id": other.admin_id}}), "assignee.id"),
        (json!({"assignee": {"type": "team", "id": 424242}}), "assignee.id"),
        (json!({"assignee": {"type": "robot", "id": 1}}), "assignee.type"),
        (json!({"assignee": {"type": "user"}}), "assignee"),
        (json!({"status": "Closed!"}), "status"),
        (json!({"priority": "high"}), "priority"),
        (json!({}), "body"),
    ] {
        let p = problem(patch(&app, &key, thread, body.clone()).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), [field], "{body}");
    }
    // Another workspace's thread is not found.
    let other_key = app.api_key(&other).await;
    problem(patch(&app, &other_key, thread, json!({"status": "resolved"})).await, 404, "not_found").await;
    let res = app.authed(Method::GET, &format!("/v1/threads/{thread}"), &other_key).send().await.expect("request");
    problem(res, 404, "not_found").await;
}
