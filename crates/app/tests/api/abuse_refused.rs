//! A request answered 401, 403 or 429 has no effect: no handler runs for it, no secret is
//! decrypted, nothing is audited — even when the instance starts a `GET` ahead of its credential
//! check because it admitted the key a moment ago (`docs/rate-limit.md`).

use domain::workspace::PlanTier;
use serde_json::{json, Value};

use crate::credentials::{admin_token, create_key, sql};
use crate::helpers::{problem, TestApp};

/// The workspace's `webhook.secret_viewed` records, read by an admin.
async fn secret_views(app: &TestApp, admin: &str) -> usize {
    let (status, body) = app.get_json("/v1/audit-events?action=webhook.secret_viewed&limit=100", admin).await;
    assert_eq!(status, 200, "{body}");
    body["data"].as_array().map_or(0, Vec::len)
}

/// A destination created with `key`, and its secret read once with it (so this instance admitted
/// the key and would guess it next time).
async fn destination_seen_by(app: &TestApp, key: &str, admin: &str) -> i64 {
    let body = json!({"url": "https://93.184.215.14/hooks/wms", "events": ["message.created"]});
    let res = app.post_json("/v1/webhooks", key, &body).await;
    assert_eq!(res.status(), 201);
    let id = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    let (status, _) = app.get_json(&format!("/v1/webhooks/{id}/secret"), key).await;
    assert_eq!(status, 200);
    assert_eq!(secret_views(app, admin).await, 1);
    id
}

#[tokio::test]
async fn a_just_revoked_key_reading_a_webhook_secret_gets_401_and_nothing_is_audited() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let (key, created) = create_key(&app, &ws, &json!({"name": "ci"})).await;
    let id = destination_seen_by(&app, &key, &admin).await;

    let key_id = created["id"].as_i64().expect("id");
    let res = app
        .client
        .post(app.url(&format!("/api/workspaces/{}/api-keys/{key_id}/revoke", ws.id)))
        .bearer_auth(&admin)
        .send()
        .await
        .expect("revoke");
    assert_eq!(res.status(), 200);

    for _ in 0..3 {
        let res = app.authed(reqwest::Method::GET, &format!("/v1/webhooks/{id}/secret"), &key).send().await;
        problem(res.expect("request"), 401, "token_revoked").await;
    }
    assert_eq!(secret_views(&app, &admin).await, 1, "a refused request is not a view");
}

#[tokio::test]
async fn a_key_of_a_just_downgraded_workspace_gets_403_and_nothing_is_audited() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let (key, _) = create_key(&app, &ws, &json!({"name": "ci"})).await;
    let id = destination_seen_by(&app, &key, &admin).await;

    sql(&app, &format!("UPDATE workspaces SET plan = 'growth' WHERE id = {}", ws.id)).await;
    let res = app.authed(reqwest::Method::GET, &format!("/v1/webhooks/{id}/secret"), &key).send().await;
    problem(res.expect("request"), 403, "plan_required").await;

    sql(&app, &format!("UPDATE workspaces SET plan = 'advanced' WHERE id = {}", ws.id)).await;
    assert_eq!(secret_views(&app, &admin).await, 1, "a refused request is not a view");
}

#[tokio::test]
async fn a_plain_read_still_answers_for_a_recently_admitted_key() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let (key, _) = create_key(&app, &ws, &json!({"name": "ci"})).await;
    for _ in 0..3 {
        let (status, body) = app.get_json("/v1/webhooks", &key).await;
        assert_eq!(status, 200, "{body}");
    }
}
