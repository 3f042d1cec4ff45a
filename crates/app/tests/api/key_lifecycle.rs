//! The API key lifecycle beyond create and revoke: rolling a key with a grace period (settings API
//! and page), and the address a key was last used from.

use std::time::Duration;

use domain::workspace::PlanTier;
use reqwest::Method;
use serde_json::{json, Value};

use crate::credentials::{add_member, admin_token, channels, create_key, header, sql, token_for};
use crate::helpers::{error_fields, problem, TestApp, TestWorkspace};
use crate::pages::sign_in;

fn roll_url(ws: i64, id: i64) -> String {
    format!("/api/workspaces/{ws}/api-keys/{id}/roll")
}

async fn roll(app: &TestApp, ws: i64, id: i64, token: &str, body: &Value) -> reqwest::Response {
    app.authed(Method::POST, &roll_url(ws, id), token).json(body).send().await.expect("request")
}

/// The workspace's key records, newest first.
async fn records(app: &TestApp, ws: i64, token: &str) -> Vec<Value> {
    let (status, body) = app.get_json(&format!("/api/workspaces/{ws}/api-keys"), token).await;
    assert_eq!(status, 200, "{body}");
    body["data"].as_array().cloned().unwrap_or_default()
}

async fn record(app: &TestApp, ws: i64, token: &str, id: i64) -> Value {
    records(app, ws, token).await.into_iter().find(|k| k["id"] == id).expect("the key is listed")
}

/// An `advanced` workspace, its admin's token, and a restricted, expiring key of it.
async fn workspace_with_key(app: &TestApp) -> (TestWorkspace, String, String, Value) {
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let token = admin_token(app, &ws).await;
    let body = json!({"name": "deploy", "expires_at": "2099-01-31T00:00:00Z", "scopes": ["channels:read"]});
    let (key, created) = create_key(app, &ws, &body).await;
    (ws, token, key, created)
}

#[tokio::test]
async fn a_rolled_key_has_a_successor_shown_once_and_works_until_its_grace_ends() {
    let app = TestApp::spawn().await;
    let (ws, token, old_key, old) = workspace_with_key(&app).await;
    let old_id = old["id"].as_i64().expect("id");

    let res = roll(&app, ws.id, old_id, &token, &json!({"grace_seconds": 3600})).await;
    assert_eq!(res.status(), 201);
    assert_eq!(header(&res, "cache-control").as_deref(), Some("no-store"));
    let new: Value = res.json().await.expect("json");
    let new_key = new["key"].as_str().expect("the successor, this once").to_owned();
    let new_id = new["id"].as_i64().expect("id");
    assert_ne!(new_id, old_id);
    assert!(new_key.starts_with("wmsk_") && new_key != old_key);
    assert_eq!(new["masked_key"], format!("wmsk_…{}", &new_key[new_key.len() - 4..]));
    for same in ["name", "expires_at", "scopes"] {
        assert_eq!(new[same], old[same], "{same}");
    }
    assert_eq!((new["state"].as_str(), new["rolled_to"].as_i64()), (Some("active"), None));

    // Both keys work during the grace; the old record names its successor and when it ends.
    assert_eq!(channels(&app, &old_key).await.status(), 200);
    assert_eq!(channels(&app, &new_key).await.status(), 200);
    let old_now = record(&app, ws.id, &token, old_id).await;
    assert_eq!(old_now["rolled_to"], new_id);
    assert_eq!(old_now["state"], "active");
    let ends = time::OffsetDateTime::parse(
        old_now["revoked_at"].as_str().expect("the grace's end"),
        &time::format_description::well_known::Rfc3339,
    )
    .expect("rfc3339");
    let left = ends - time::OffsetDateTime::now_utc();
    assert!(left > time::Duration::minutes(59) && left <= time::Duration::hours(1), "{left}");
    // The successor is never shown again.
    let listed = serde_json::to_string(&records(&app, ws.id, &token).await).expect("json");
    assert!(!listed.contains(&new_key[5..]));

    // One record, naming both keys by their masked forms, without either key.
    let (_, audit) = app.get_json("/v1/audit-events?action=api_key.rolled", &token).await;
    let entries = audit["data"].as_array().expect("records");
    assert_eq!(entries.len(), 1, "{audit}");
    assert_eq!(entries[0]["target"], json!({"type": "api_key", "id": old_id}));
    assert_eq!(entries[0]["details"]["rolled_to"], new_id);
    assert_eq!(entries[0]["details"]["grace_seconds"], 3600);
    assert_eq!(entries[0]["actor"]["type"], "user");
    let text = entries[0].to_string();
    assert!(!text.contains(&new_key[5..]) && !text.contains(&old_key[5..]));
}

#[tokio::test]
async fn the_old_key_is_refused_as_revoked_once_the_grace_has_passed() {
    let app = TestApp::spawn().await;
    let (ws, token, old_key, old) = workspace_with_key(&app).await;
    let old_id = old["id"].as_i64().expect("id");
    let res = roll(&app, ws.id, old_id, &token, &json!({"grace_seconds": 1})).await;
    assert_eq!(res.status(), 201);
    let new_key = res.json::<Value>().await.expect("json")["key"].as_str().expect("key").to_owned();
    assert_eq!(channels(&app, &old_key).await.status(), 200);

    tokio::time::sleep(Duration::from_millis(1100)).await;
    problem(channels(&app, &old_key).await, 401, "token_revoked").await;
    assert_eq!(channels(&app, &new_key).await.status(), 200);
    assert_eq!(record(&app, ws.id, &token, old_id).await["state"], "revoked");
}

#[tokio::test]
async fn a_grace_of_zero_stops_the_old_key_at_once() {
    let app = TestApp::spawn().await;
    let (ws, token, old_key, old) = workspace_with_key(&app).await;
    let old_id = old["id"].as_i64().expect("id");
    assert_eq!(roll(&app, ws.id, old_id, &token, &json!({"grace_seconds": 0})).await.status(), 201);
    problem(channels(&app, &old_key).await, 401, "token_revoked").await;
    assert_eq!(record(&app, ws.id, &token, old_id).await["state"], "revoked");
}

#[tokio::test]
async fn revoking_a_key_in_its_grace_period_stops_it_now() {
    let app = TestApp::spawn().await;
    let (ws, token, old_key, old) = workspace_with_key(&app).await;
    let old_id = old["id"].as_i64().expect("id");
    assert_eq!(roll(&app, ws.id, old_id, &token, &json!({"grace_seconds": 86400})).await.status(), 201);
    let res = app.authed(Method::POST, &format!("/api/workspaces/{}/api-keys/{old_id}/revoke", ws.id), &token);
    let revoked: Value = res.send().await.expect("request").json().await.expect("json");
    assert_eq!(revoked["state"], "revoked");
    problem(channels(&app, &old_key).await, 401, "token_revoked").await;
    let (_, audit) = app.get_json("/v1/audit-events?action=api_key.revoked", &token).await;
    assert_eq!(audit["data"].as_array().map(Vec::len), Some(1), "{audit}");
}

async fn key_rows(app: &TestApp, ws: i64) -> i64 {
    let sql = format!(
        "SELECT json_build_object('n', count(*))::text AS j FROM api_keys WHERE workspace_id = {ws} AND $1 = 0"
    );
    crate::assistant_helpers::sql_json(app, &sql, 0).await["n"].as_i64().expect("count")
}

#[tokio::test]
async fn rolling_a_revoked_expired_or_rolled_key_is_a_conflict_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let (ws, token, _, first) = workspace_with_key(&app).await;
    let first_id = first["id"].as_i64().expect("id");
    let res = roll(&app, ws.id, first_id, &token, &json!({"grace_seconds": 600})).await;
    assert_eq!(res.status(), 201);
    let successor = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    let rows = key_rows(&app, ws.id).await;

    // Rolled already (still in its grace): roll the successor instead.
    let body = problem(roll(&app, ws.id, first_id, &token, &json!({"grace_seconds": 0})).await, 409, "conflict").await;
    assert!(body["detail"].as_str().unwrap_or("").contains(&successor.to_string()), "{body}");

    let (_, revoked) = create_key(&app, &ws, &json!({"name": "revoked"})).await;
    let revoked_id = revoked["id"].as_i64().expect("id");
    let res = app.authed(Method::POST, &format!("/api/workspaces/{}/api-keys/{revoked_id}/revoke", ws.id), &token);
    assert_eq!(res.send().await.expect("request").status(), 200);
    problem(roll(&app, ws.id, revoked_id, &token, &json!({"grace_seconds": 60})).await, 409, "conflict").await;

    let (_, expired) = create_key(&app, &ws, &json!({"name": "expired"})).await;
    let expired_id = expired["id"].as_i64().expect("id");
    sql(&app, &format!("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = {expired_id}")).await;
    problem(roll(&app, ws.id, expired_id, &token, &json!({"grace_seconds": 60})).await, 409, "conflict").await;

    assert_eq!(key_rows(&app, ws.id).await, rows + 2, "only the two keys created since");
    let (_, audit) = app.get_json("/v1/audit-events?action=api_key.rolled", &token).await;
    assert_eq!(audit["data"].as_array().map(Vec::len), Some(1));
    assert!(record(&app, ws.id, &token, revoked_id).await["rolled_to"].is_null());
}

#[tokio::test]
async fn a_bad_grace_is_named_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let (ws, token, key, created) = workspace_with_key(&app).await;
    let id = created["id"].as_i64().expect("id");
    let rows = key_rows(&app, ws.id).await;
    for body in [
        json!({"grace_seconds": -1}),
        json!({"grace_seconds": 604_801}),
        json!({"grace_seconds": "3600"}),
        json!({"grace_seconds": 1.5}),
        json!({"grace_seconds": null}),
        json!({}),
    ] {
        let problem_body = problem(roll(&app, ws.id, id, &token, &body).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&problem_body), ["grace_seconds"], "{body}");
    }
    let unknown = problem(
        roll(&app, ws.id, id, &token, &json!({"grace_seconds": 1, "name": "x"})).await,
        422,
        "validation_failed",
    )
    .await;
    assert_eq!(error_fields(&unknown), ["name"]);
    assert_eq!(
        roll(&app, ws.id, id, &token, &json!({"grace_seconds": 604_800})).await.status(),
        201,
        "a week is allowed"
    );
    assert_eq!(key_rows(&app, ws.id).await, rows + 1);
    assert_eq!(channels(&app, &key).await.status(), 200);
}

#[tokio::test]
async fn only_an_admin_of_the_workspace_rolls_its_keys() {
    let app = TestApp::spawn().await;
    let (ws, _, key, created) = workspace_with_key(&app).await;
    let id = created["id"].as_i64().expect("id");
    let rows = key_rows(&app, ws.id).await;
    let (email, password) = add_member(&app, ws.id, "agent").await;
    let agent = token_for(&app, &email, &password, Some(ws.id)).await;
    problem(roll(&app, ws.id, id, &agent, &json!({"grace_seconds": 60})).await, 403, "forbidden").await;
    // A key cannot roll keys, not even itself.
    problem(roll(&app, ws.id, id, &key, &json!({"grace_seconds": 60})).await, 403, "forbidden").await;
    // Another workspace's admin does not find it (their own workspace's path) or is not a member.
    let other = app.create_workspace(PlanTier::Advanced).await;
    let other_token = admin_token(&app, &other).await;
    problem(roll(&app, other.id, id, &other_token, &json!({"grace_seconds": 60})).await, 404, "not_found").await;
    problem(roll(&app, ws.id, id, &other_token, &json!({"grace_seconds": 60})).await, 404, "not_found").await;
    problem(
        app.client
            .post(app.url(&roll_url(ws.id, id)))
            .json(&json!({"grace_seconds": 60}))
            .send()
            .await
            .expect("request"),
        401,
        "unauthenticated",
    )
    .await;
    assert_eq!(key_rows(&app, ws.id).await, rows);
}

#[tokio::test]
async fn the_page_rolls_a_key_with_the_chosen_grace_and_shows_the_successor_once() {
    let app = TestApp::spawn().await;
    let (ws, token, old_key, old) = workspace_with_key(&app).await;
    let old_id = old["id"].as_i64().expect("id");
    let browser = sign_in(&app, &ws).await;
    let page = browser.get(&app, "/settings/workspace/api-keys").await.text().await.expect("html");
    assert!(page.contains(&format!("action=\"/settings/workspace/api-keys/{old_id}/roll\"")), "a roll form");
    assert!(page.contains("name=\"grace_seconds\""));

    let path = format!("/settings/workspace/api-keys/{old_id}/roll");
    let res = browser.post(&app, &path, &[("grace_seconds", "86400")], true).await;
    assert_eq!(res.status(), 201);
    assert_eq!(header(&res, "cache-control").as_deref(), Some("no-store"));
    let html = res.text().await.expect("html");
    let successor = records(&app, ws.id, &token).await.into_iter().find(|k| k["id"] != old_id).expect("successor");
    let tail = successor["masked_key"].as_str().expect("masked").trim_start_matches("wmsk_…").to_owned();
    let at = html.find("id=\"new-key\"").expect("the new key is shown");
    let shown = html[at..].split("value=\"").nth(1).and_then(|v| v.split('"').next()).expect("value").to_owned();
    assert!(shown.starts_with("wmsk_") && shown.ends_with(&tail));
    assert_eq!(channels(&app, &shown).await.status(), 200);
    assert_eq!(channels(&app, &old_key).await.status(), 200, "the old key works through the day's grace");
    assert!(html.contains(&format!("Rolled to key #{}", successor["id"])));

    // Shown once: the list afterwards does not have it; without the form's token nothing happens.
    let again = browser.get(&app, "/settings/workspace/api-keys").await.text().await.expect("html");
    assert!(!again.contains(&shown[5..]));
    let rows = key_rows(&app, ws.id).await;
    let forged = browser
        .post(&app, &format!("/settings/workspace/api-keys/{}/roll", successor["id"]), &[("grace_seconds", "0")], false)
        .await;
    assert_eq!(forged.status(), 403);
    assert_eq!(key_rows(&app, ws.id).await, rows);
}

#[tokio::test]
async fn a_key_records_the_address_it_was_last_used_from() {
    let app = TestApp::spawn().await;
    let (ws, token, key, created) = workspace_with_key(&app).await;
    let id = created["id"].as_i64().expect("id");
    assert!(created["last_used_ip"].is_null());
    assert_eq!(channels(&app, &key).await.status(), 200);
    let listed = record(&app, ws.id, &token, id).await;
    assert!(listed["last_used_at"].is_string());
    assert_eq!(listed["last_used_ip"], "127.0.0.1");
    // Written with last_used_at (at most once a minute), never on its own.
    sql(&app, &format!("UPDATE api_keys SET last_used_ip = '192.0.2.1' WHERE id = {id}")).await;
    assert_eq!(channels(&app, &key).await.status(), 200);
    assert_eq!(record(&app, ws.id, &token, id).await["last_used_ip"], "192.0.2.1");
    sql(&app, &format!("UPDATE api_keys SET last_used_at = now() - interval '2 minutes' WHERE id = {id}")).await;
    assert_eq!(channels(&app, &key).await.status(), 200);
    assert_eq!(record(&app, ws.id, &token, id).await["last_used_ip"], "127.0.0.1");

    let browser = sign_in(&app, &ws).await;
    let page = browser.get(&app, "/settings/workspace/api-keys").await.text().await.expect("html");
    assert!(page.contains("from 127.0.0.1"));
}
