//! Who sent each message: the key, a member or AI agent a key sends for, the member of a user
//! token; anyone else is refused naming `sender`, and nothing is stored.

use diesel::sql_types::BigInt;
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use serde_json::{json, Value};

use super::add_agent;
use super::assignment::user_token;
use crate::helpers::{error_fields, problem, test_template, TestApp};

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

async fn one_id(app: &TestApp, sql: &str, ws: i64) -> i64 {
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query(sql).bind::<BigInt, _>(ws).get_result::<Id>(&mut conn).await.expect(sql).id
}

#[tokio::test]
async fn each_send_records_its_sender_and_a_key_may_send_for_an_active_member_or_agent() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let other = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let key_id = one_id(&app, "SELECT id FROM api_keys WHERE workspace_id = $1", ws.id).await;
    let agent = one_id(
        &app,
        "INSERT INTO ai_agents (workspace_id, name, status) VALUES ($1, 'Bot', 'active') RETURNING id",
        ws.id,
    )
    .await;
    let draft =
        one_id(&app, "INSERT INTO ai_agents (workspace_id, name) VALUES ($1, 'Draft') RETURNING id", ws.id).await;
    let member = add_agent(&app, ws.id).await;
    let send = |body: Value| {
        let mut b = json!({"channel_id": ch, "content": "Hi", "to": "+14155550123", "template": test_template()});
        b.as_object_mut().expect("object").extend(body.as_object().expect("object").clone());
        b
    };
    for (extra, sender) in [
        (json!({}), json!({"type": "api_key", "id": key_id})),
        (json!({"sender": {"type": "user", "id": member}}), json!({"type": "user", "id": member})),
        (json!({"sender": {"type": "ai_agent", "id": agent}}), json!({"type": "ai_agent", "id": agent})),
    ] {
        let res = app.post_json("/v1/messages", &key, &send(extra.clone())).await;
        assert_eq!(res.status(), 201, "{extra}");
        let m: Value = res.json().await.expect("json");
        assert_eq!(m["sender"], sender);
        let (_, read) = app.get_json(&format!("/v1/messages/{}", m["id"]), &key).await;
        assert_eq!(read["sender"], sender);
    }
    let token = user_token(&app, ws.id, ws.admin_id).await;
    let res = app.post_json("/v1/messages", &token, &send(json!({}))).await;
    assert_eq!(res.json::<Value>().await.expect("json")["sender"], json!({"type": "user", "id": ws.admin_id}));

    let (_, before) = app.get_json("/v1/messages", &key).await;
    for (who, extra) in [
        (&key, json!({"sender": {"type": "user", "id": other.admin_id}})),
        (&key, json!({"sender": {"type": "ai_agent", "id": draft}})),
        (&key, json!({"sender": {"type": "contact", "id": 1}})),
        (&key, json!({"sender": {"type": "api_key", "id": key_id}})),
        (&token, json!({"sender": {"type": "user", "id": member}})),
    ] {
        let p = problem(app.post_json("/v1/messages", who, &send(extra.clone())).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), ["sender"], "{extra}");
    }
    let (_, after) = app.get_json("/v1/messages", &key).await;
    assert_eq!(before["data"].as_array().map(Vec::len), after["data"].as_array().map(Vec::len), "nothing stored");
}
