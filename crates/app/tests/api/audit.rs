//! The audit log (`docs/contract.md`, "Audit log"): each privileged action leaves exactly one record
//! with who (actor), what (target), from where (address, user agent, request id) and never a
//! secret; refused and invalid changes leave none (a failed sign-in is the one failure recorded);
//! `GET /v1/audit-events` filters and pages; another workspace's records are never seen; the
//! settings page; the retention cleanup.

use std::process::Command;

use diesel_async::RunQueryDsl;
use domain::workspace::PlanTier;
use reqwest::Method;
use serde_json::{json, Value};

use crate::credentials::{add_member, admin_token, login_raw, sql, token_for};
use crate::helpers::{error_fields, problem, TestApp, TestWorkspace};

// More of the log by idea, sharing the helpers below.
mod command_line;
mod labels;
mod member_updates;
mod reading;
mod sign_ins;
mod teams;
mod webhook_sends;

const UA: &str = "audit-test/1.0 (wms suite)";

/// A request carrying the test's user agent and request id.
fn req(app: &TestApp, method: Method, path: &str, token: &str, rid: &str) -> reqwest::RequestBuilder {
    app.authed(method, path, token).header("user-agent", UA).header("x-request-id", rid)
}

/// The workspace's records of `action`, read through `GET /v1/audit-events` with `token`.
async fn records(app: &TestApp, token: &str, action: &str) -> Vec<Value> {
    let (status, body) = app.get_json(&format!("/v1/audit-events?action={action}&limit=100"), token).await;
    assert_eq!(status, 200, "{body}");
    body["data"].as_array().cloned().unwrap_or_default()
}

/// The one record of `action`.
async fn one(app: &TestApp, token: &str, action: &str) -> Value {
    let all = records(app, token, action).await;
    assert_eq!(all.len(), 1, "exactly one {action} record: {all:?}");
    all[0].clone()
}

/// Checks who, on what and from where.
fn check(r: &Value, actor: (&str, Option<i64>), target: (&str, i64), rid: &str) {
    assert_eq!(r["actor"]["type"], actor.0, "{r}");
    assert_eq!(r["actor"]["id"].as_i64(), actor.1, "{r}");
    assert!(r["actor"]["label"].as_str().is_some_and(|l| !l.is_empty()), "{r}");
    assert_eq!(r["target"]["type"], target.0, "{r}");
    assert_eq!(r["target"]["id"], target.1, "{r}");
    assert_eq!(r["ip"], "127.0.0.1", "{r}");
    assert_eq!(r["user_agent"], UA, "{r}");
    assert_eq!(r["request_id"], rid, "{r}");
    assert!(r["id"].is_i64() && r["occurred_at"].is_string() && r["details"].is_object(), "{r}");
}

/// How many records the workspace has, apart from sign-ins.
async fn count(app: &TestApp, ws: i64) -> i64 {
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query("SELECT count(*) AS n FROM audit_events WHERE workspace_id = $1 AND action NOT LIKE 'user.sign%'")
        .bind::<diesel::sql_types::BigInt, _>(ws)
        .get_result::<N>(&mut conn)
        .await
        .expect("count")
        .n
}

async fn advanced(app: &TestApp) -> (TestWorkspace, String) {
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let token = admin_token(app, &ws).await;
    (ws, token)
}

#[tokio::test]
async fn api_key_actions_are_recorded_once_with_who_and_where_and_never_the_key() {
    let app = TestApp::spawn().await;
    let (ws, token) = advanced(&app).await;
    let base = format!("/api/workspaces/{}/api-keys", ws.id);
    let res = req(&app, Method::POST, &base, &token, "rid-key-create").json(&json!({"name": "ci"})).send().await;
    let created: Value = res.expect("request").json().await.expect("json");
    let (id, key) = (created["id"].as_i64().expect("id"), created["key"].as_str().expect("key").to_owned());

    let r = one(&app, &token, "api_key.created").await;
    check(&r, ("user", Some(ws.admin_id)), ("api_key", id), "rid-key-create");
    assert_eq!(r["actor"]["label"], ws.admin_email.as_str());
    assert_eq!(r["details"]["name"], "ci");
    assert_eq!(r["details"]["masked_key"], created["masked_key"]);
    assert!(!r.to_string().contains(&key), "the key is never recorded: {r}");

    // A second revocation changes nothing and is not recorded again.
    for rid in ["rid-key-revoke", "rid-key-revoke-again"] {
        let res = req(&app, Method::POST, &format!("{base}/{id}/revoke"), &token, rid).send().await.expect("request");
        assert_eq!(res.status(), 200);
    }
    let r = one(&app, &token, "api_key.revoked").await;
    check(&r, ("user", Some(ws.admin_id)), ("api_key", id), "rid-key-revoke");

    let res = req(&app, Method::DELETE, &format!("{base}/{id}"), &token, "rid-key-delete").send().await;
    assert_eq!(res.expect("request").status(), 204);
    let r = one(&app, &token, "api_key.deleted").await;
    check(&r, ("user", Some(ws.admin_id)), ("api_key", id), "rid-key-delete");
    assert_eq!(r["details"]["name"], "ci");
    // Deleting it again: 404, nothing recorded.
    let res = req(&app, Method::DELETE, &format!("{base}/{id}"), &token, "rid-key-delete-2").send().await;
    assert_eq!(res.expect("request").status(), 404);
    assert_eq!(records(&app, &token, "api_key.deleted").await.len(), 1);
}

#[tokio::test]
async fn refused_and_invalid_changes_leave_no_record() {
    let app = TestApp::spawn().await;
    let (ws, token) = advanced(&app).await;
    let (agent_email, agent_password) = add_member(&app, ws.id, "agent").await;
    let agent = token_for(&app, &agent_email, &agent_password, Some(ws.id)).await;
    let keys = format!("/api/workspaces/{}/api-keys", ws.id);

    // 403: an agent managing keys, members, webhooks, channels.
    problem(app.post_json(&keys, &agent, &json!({"name": "x"})).await, 403, "forbidden").await;
    let add = json!({"email": "new@test.wms", "name": "New", "role": "agent"});
    problem(app.post_json("/v1/users", &agent, &add).await, 403, "forbidden").await;
    let hook = json!({"url": "https://93.184.215.14/hooks", "events": ["message.created"]});
    problem(app.post_json("/v1/webhooks", &agent, &hook).await, 403, "forbidden").await;
    let channel = json!({"channel_type": "whatsapp", "display_name": "X", "identifier": "+14155550100"});
    problem(app.post_json("/v1/channels", &agent, &channel).await, 403, "forbidden").await;
    // 403: nobody changes their own role.
    let res = app.authed(Method::PATCH, &format!("/v1/users/{}", ws.admin_id), &token).json(&json!({"role": "agent"}));
    problem(res.send().await.expect("request"), 403, "forbidden").await;
    // 422: invalid input.
    problem(app.post_json(&keys, &token, &json!({"name": " "})).await, 422, "validation_failed").await;
    let bad = json!({"email": "not-an-email", "name": "X", "role": "agent"});
    problem(app.post_json("/v1/users", &token, &bad).await, 422, "validation_failed").await;
    let bad_hook = json!({"url": "ftp://x", "events": ["no.such"]});
    problem(app.post_json("/v1/webhooks", &token, &bad_hook).await, 422, "validation_failed").await;
    let bad_channel = json!({"channel_type": "fax", "display_name": "X", "identifier": "1"});
    problem(app.post_json("/v1/channels", &token, &bad_channel).await, 422, "validation_failed").await;
    // 409: an existing member again.
    let again = json!({"email": agent_email, "name": "Again", "role": "agent"});
    problem(app.post_json("/v1/users", &token, &again).await, 409, "conflict").await;

    assert_eq!(count(&app, ws.id).await, 0, "no record of anything refused");
    // And an agent cannot read the log.
    problem(app.authed(Method::GET, "/v1/audit-events", &agent).send().await.expect("request"), 403, "forbidden").await;
}

#[tokio::test]
async fn member_actions_are_recorded_with_the_key_that_made_them() {
    let app = TestApp::spawn().await;
    let (ws, token) = advanced(&app).await;
    let key = app.api_key(&ws).await;
    let key_id = {
        let (_, list) = app.get_json(&format!("/api/workspaces/{}/api-keys", ws.id), &token).await;
        list["data"][0]["id"].as_i64().expect("key id")
    };
    let add = json!({"email": "Zoe@Test.wms", "name": "Zoe", "role": "agent"});
    let res = req(&app, Method::POST, "/v1/users", &key, "rid-add").json(&add).send().await.expect("request");
    assert_eq!(res.status(), 201);
    let added: Value = res.json().await.expect("json");
    let user = added["id"].as_i64().expect("id");
    assert!(added.get("invitation").is_none());

    let r = one(&app, &token, "member.added").await;
    check(&r, ("api_key", Some(key_id)), ("user", user), "rid-add");
    assert_eq!(r["actor"]["label"], "test key");
    assert_eq!(r["details"]["role"].as_str(), Some("agent"));
    // Whether the account existed or had a password is nobody's business here.
    assert!(r["details"].get("invited").is_none(), "{r}");
    assert!(!r.to_string().contains("wmsu_"), "no invitation token in {r}");

    let path = format!("/v1/users/{user}");
    let res = req(&app, Method::PATCH, &path, &key, "rid-deactivate").json(&json!({"active": false})).send().await;
    assert_eq!(res.expect("request").status(), 200);
    check(&one(&app, &token, "member.deactivated").await, ("api_key", Some(key_id)), ("user", user), "rid-deactivate");

    // Promotion is an admin member's: the key is refused and nothing is recorded.
    let res = req(&app, Method::PATCH, &path, &key, "rid-key-role").json(&json!({"role": "admin"})).send().await;
    assert_eq!(res.expect("request").status(), 403);
    let res = req(&app, Method::PATCH, &path, &token, "rid-role").json(&json!({"role": "admin"})).send().await;
    assert_eq!(res.expect("request").status(), 200);
    let r = one(&app, &token, "member.role_changed").await;
    check(&r, ("user", Some(ws.admin_id)), ("user", user), "rid-role");
    assert_eq!((r["details"]["role"].as_str(), r["details"]["previous_role"].as_str()), (Some("admin"), Some("agent")));

    let res = req(&app, Method::DELETE, &path, &token, "rid-remove").send().await;
    assert_eq!(res.expect("request").status(), 204);
    let r = one(&app, &token, "member.removed").await;
    check(&r, ("user", Some(ws.admin_id)), ("user", user), "rid-remove");
    assert_eq!(r["details"]["email"], "zoe@test.wms");
    // Nothing else was recorded for these four changes (renames: `audit/member_updates.rs`).
    assert_eq!(count(&app, ws.id).await, 4);
}

#[tokio::test]
async fn webhook_actions_are_recorded_and_never_hold_the_secret() {
    let app = TestApp::spawn().await;
    let (ws, token) = advanced(&app).await;
    // A URL carrying credentials of the receiver: the audit log keeps its origin and path only.
    let body = json!({"url": "https://user:pw-secret@93.184.215.14/hooks/wms?token=tk-secret#frag-secret",
                      "events": ["message.created"]});
    let res = req(&app, Method::POST, "/v1/webhooks", &token, "rid-hook-create").json(&body).send().await;
    let created: Value = res.expect("request").json().await.expect("json");
    let id = created["id"].as_i64().expect("id");
    let first_secret = created["secret"].as_str().expect("secret").to_owned();
    let actor = ("user", Some(ws.admin_id));
    check(&one(&app, &token, "webhook.created").await, actor, ("webhook", id), "rid-hook-create");

    let path = format!("/v1/webhooks/{id}");
    let patch = json!({"events": ["message.created", "thread.created"]});
    let res = req(&app, Method::PATCH, &path, &token, "rid-hook-update").json(&patch).send().await;
    assert_eq!(res.expect("request").status(), 200);
    let r = one(&app, &token, "webhook.updated").await;
    check(&r, actor, ("webhook", id), "rid-hook-update");
    assert_eq!(r["details"]["fields"], json!(["events"]));

    let res = req(&app, Method::GET, &format!("{path}/secret"), &token, "rid-hook-secret").send().await;
    assert_eq!(res.expect("request").status(), 200);
    check(&one(&app, &token, "webhook.secret_viewed").await, actor, ("webhook", id), "rid-hook-secret");

    let res = req(&app, Method::POST, &format!("{path}/secret/rotate"), &token, "rid-hook-rotate").send().await;
    let rotated: Value = res.expect("request").json().await.expect("json");
    let second_secret = rotated["secret"].as_str().expect("secret").to_owned();
    check(&one(&app, &token, "webhook.secret_rotated").await, actor, ("webhook", id), "rid-hook-rotate");

    let res = req(&app, Method::DELETE, &path, &token, "rid-hook-delete").send().await;
    assert_eq!(res.expect("request").status(), 204);
    let r = one(&app, &token, "webhook.deleted").await;
    check(&r, actor, ("webhook", id), "rid-hook-delete");
    assert_eq!(r["details"]["url"], "https://93.184.215.14/hooks/wms");
    // A secret of another destination id is not found and not recorded.
    let res = req(&app, Method::GET, &format!("{path}/secret"), &token, "rid-hook-secret-2").send().await;
    assert_eq!(res.expect("request").status(), 404);
    assert_eq!(records(&app, &token, "webhook.secret_viewed").await.len(), 1);

    let (_, all) = app.get_json("/v1/audit-events?limit=100", &token).await;
    let text = all.to_string();
    assert!(!text.contains(&first_secret) && !text.contains(&second_secret) && !text.contains("whsec_"));
    assert!(!text.contains("pw-secret") && !text.contains("tk-secret") && !text.contains("frag-secret"), "{text}");
}

#[tokio::test]
async fn an_auto_disabled_webhook_is_recorded_by_the_system() {
    use crate::webhooks_delivery::{destination, emit, loopback};
    use crate::webhooks_receiver::{Answer, Receiver};
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    receiver.answer_always(Answer::status(410));
    let (ws, token) = advanced(&app).await;
    let key = app.api_key(&ws).await;
    let (id, _) = destination(&app, &key, &receiver.url("/"), &["contact.created"]).await;
    emit(&app, ws.id, domain::webhooks::EventType::ContactCreated, json!({"id": 1})).await;
    let clock = std::sync::Arc::new(crate::webhooks_delivery::TestClock::new());
    let engine = app::webhooks::engine(&app.settings, &app.db, clock);
    app::webhooks::run_once(&engine, 10).await.expect("run");

    let r = one(&app, &token, "webhook.disabled").await;
    assert_eq!((r["actor"]["type"].as_str(), r["actor"]["id"].as_i64()), (Some("system"), None), "{r}");
    assert_eq!((r["target"]["type"].as_str(), r["target"]["id"].as_i64()), (Some("webhook"), Some(id)));
    assert!(r["details"]["reason"].as_str().is_some_and(|s| s.contains("410")), "{r}");
}

#[tokio::test]
async fn channel_actions_are_recorded_and_never_hold_the_credentials() {
    // New credentials are proved against the Graph API first: the tests' stand-in answers.
    let graph = crate::connectors::Graph::start();
    let app = crate::connectors::spawn(&graph).await;
    let (ws, token) = advanced(&app).await;
    let actor = ("user", Some(ws.admin_id));
    let body = json!({"channel_type": "whatsapp", "display_name": "Support", "identifier": "+14155550123"});
    let res = req(&app, Method::POST, "/v1/channels", &token, "rid-channel-create").json(&body).send().await;
    let created: Value = res.expect("request").json().await.expect("json");
    let id = created["id"].as_i64().expect("id");
    let r = one(&app, &token, "channel.created").await;
    check(&r, actor, ("channel", id), "rid-channel-create");
    assert_eq!(r["details"]["channel_type"], "whatsapp");

    let path = format!("/v1/channels/{id}");
    let res = req(&app, Method::PATCH, &path, &token, "rid-channel-rename").json(&json!({"display_name": "Sales"}));
    assert_eq!(res.send().await.expect("request").status(), 200);
    let r = one(&app, &token, "channel.updated").await;
    check(&r, actor, ("channel", id), "rid-channel-rename");
    assert_eq!(r["details"]["fields"], json!(["display_name"]));

    let secret_token = "EAAG-very-secret-access-token";
    let creds = json!({"credentials": {"phone_number_id": "109876543210987", "access_token": secret_token,
        "app_secret": "app-secret-value-1", "verify_token": "verify-token-value"}});
    let res = req(&app, Method::PATCH, &path, &token, "rid-channel-creds").json(&creds).send().await;
    assert_eq!(res.expect("request").status(), 200);
    check(&one(&app, &token, "channel.credentials_changed").await, actor, ("channel", id), "rid-channel-creds");
    assert_eq!(records(&app, &token, "channel.updated").await.len(), 1, "a credentials change alone is not an update");
    let (_, all) = app.get_json("/v1/audit-events?limit=100", &token).await;
    let text = all.to_string();
    for secret in [secret_token, "app-secret-value-1", "verify-token-value"] {
        assert!(!text.contains(secret), "{secret} recorded");
    }
}

#[tokio::test]
async fn sign_ins_are_recorded_and_failures_go_to_each_workspace_of_the_account() {
    let app = TestApp::spawn().await;
    let (ws, token) = advanced(&app).await;
    let other = app.create_workspace(PlanTier::Advanced).await;
    let other_token = admin_token(&app, &other).await;
    sql(
        &app,
        &format!(
            "INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ({}, {}, 'agent')",
            other.id, ws.admin_id
        ),
    )
    .await;

    // The admin's own sign-in (by `admin_token`) is in the log, with where it came from.
    let res = app
        .client
        .post(app.url("/v1/auth/login"))
        .header("user-agent", UA)
        .header("x-request-id", "rid-login")
        .json(&json!({"email": ws.admin_email, "password": ws.admin_password, "workspace_id": ws.id}))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    let signed: Vec<Value> = records(&app, &token, "user.signed_in").await;
    let r = signed.iter().find(|r| r["request_id"] == "rid-login").expect("the sign-in");
    check(r, ("user", Some(ws.admin_id)), ("user", ws.admin_id), "rid-login");
    assert_eq!(r["actor"]["label"], ws.admin_email.as_str());

    let wrong = json!({"email": ws.admin_email, "password": "wrong password!"});
    let res = app
        .client
        .post(app.url("/v1/auth/login"))
        .header("user-agent", UA)
        .header("x-request-id", "rid-fail")
        .json(&wrong);
    problem(res.send().await.expect("request"), 401, "invalid_credentials").await;
    let mine = one(&app, &token, "user.sign_in_failed").await;
    check(&mine, ("user", Some(ws.admin_id)), ("user", ws.admin_id), "rid-fail");
    assert!(!mine.to_string().contains("wrong password!"), "the password is never recorded");
    assert_eq!(records(&app, &other_token, "user.sign_in_failed").await.len(), 1, "in each workspace of the e-mail");

    // Naming a workspace: only its log.
    let named = json!({"email": ws.admin_email, "password": "wrong again!", "workspace_id": other.id});
    problem(login_raw(&app, &named).await, 401, "invalid_credentials").await;
    assert_eq!(records(&app, &token, "user.sign_in_failed").await.len(), 1);
    assert_eq!(records(&app, &other_token, "user.sign_in_failed").await.len(), 2);
    // An unknown e-mail belongs to no workspace.
    problem(login_raw(&app, &json!({"email": "nobody@test.wms", "password": "x"})).await, 401, "invalid_credentials")
        .await;
    assert_eq!(records(&app, &token, "user.sign_in_failed").await.len(), 1);
}

#[tokio::test]
async fn retention_deletes_only_records_older_than_the_setting() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Free).await;
    for age in [400, 366, 364, 10] {
        sql(
            &app,
            &format!(
                "INSERT INTO audit_events (workspace_id, occurred_at, action, actor_type, details) \
             VALUES ({}, now() - interval '{age} days', 'api_key.created', 'system', '{{\"age\": {age}}}')",
                ws.id
            ),
        )
        .await;
    }
    assert_eq!(app.settings.audit.retention_days, 365, "the default");
    let deleted = app::retention::prune_audit(&app.db, &app::platform::SystemClock, 365).await.expect("prune");
    assert_eq!(deleted, 2);
    #[derive(diesel::QueryableByName)]
    struct Age {
        #[diesel(sql_type = diesel::sql_types::Text)]
        age: String,
    }
    let mut conn = app.db.conn().await.expect("conn");
    let left: Vec<Age> = diesel::sql_query(format!(
        "SELECT details->>'age' AS age FROM audit_events WHERE workspace_id = {} ORDER BY occurred_at",
        ws.id
    ))
    .load(&mut conn)
    .await
    .expect("rows");
    assert_eq!(left.iter().map(|a| a.age.as_str()).collect::<Vec<_>>(), ["364", "10"]);
}
