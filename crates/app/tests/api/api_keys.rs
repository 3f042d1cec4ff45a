//! API key lifecycle (`docs/auth.md`, "Settings API for keys") through the settings API, and what
//! each state means on `/v1`.

use domain::workspace::PlanTier;
use serde_json::{json, Value};

use crate::credentials::{
    add_member, admin_token, channels, channels_with, create_key, create_key_raw, header, sql, sql_bool, token_for,
};
use crate::helpers::{error_fields, problem, TestApp};

fn keys_url(ws: i64) -> String {
    format!("/api/workspaces/{ws}/api-keys")
}

async fn list(app: &TestApp, ws: i64, token: &str) -> Value {
    let res = app.client.get(app.url(&keys_url(ws))).bearer_auth(token).send().await.expect("request");
    assert_eq!(res.status(), 200);
    res.json().await.expect("json")
}

async fn revoke(app: &TestApp, ws: i64, id: i64, token: &str) -> reqwest::Response {
    app.client.post(app.url(&format!("{}/{id}/revoke", keys_url(ws)))).bearer_auth(token).send().await.expect("request")
}

async fn delete(app: &TestApp, ws: i64, id: i64, token: &str) -> reqwest::Response {
    app.client.delete(app.url(&format!("{}/{id}", keys_url(ws)))).bearer_auth(token).send().await.expect("request")
}

#[tokio::test]
async fn an_advanced_admin_creates_a_key_shown_once_and_stored_as_a_digest() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let token = admin_token(&app, &ws).await;
    let res = create_key_raw(&app, ws.id, &token, &json!({"name": "  CI deploy  "})).await;
    assert_eq!(res.status(), 201);
    assert_eq!(header(&res, "cache-control").as_deref(), Some("no-store"));
    let created: Value = res.json().await.expect("json");
    let key = created["key"].as_str().expect("key").to_owned();
    let id = created["id"].as_i64().expect("id");

    // docs/contract.md: ^wms[ku]_[0-9A-Za-z]{40,}$, masked as wmsk_… and the last 4.
    assert!(key.starts_with("wmsk_") && key.len() >= 45 && key[5..].chars().all(|c| c.is_ascii_alphanumeric()));
    assert_eq!(created["masked_key"], format!("wmsk_…{}", &key[key.len() - 4..]));
    assert_eq!(created["name"], "CI deploy");
    assert_eq!(created["state"], "active");
    assert!(created["created_at"].is_string());
    for field in ["expires_at", "last_used_at", "revoked_at"] {
        assert!(created[field].is_null(), "{field}");
    }
    assert_eq!(channels(&app, &key).await.status(), 200);

    // Never again: not in the list, not in revoke's answer, not in the database.
    let listed = list(&app, ws.id, &token).await;
    assert!(!listed.to_string().contains(&key[5..]));
    assert_eq!(listed["data"][0]["id"], id);
    assert!(listed["data"][0].get("key").is_none());
    let revoked = revoke(&app, ws.id, id, &token).await.text().await.expect("body");
    assert!(!revoked.contains(&key[5..]));
    let digest: String = domain::auth::digest(&key).0.iter().map(|b| format!("{b:02x}")).collect();
    assert!(sql_bool(&app, &format!("EXISTS (SELECT 1 FROM api_keys WHERE key_digest = '\\x{digest}'::bytea)")).await);
    for table in ["api_keys", "rate_limit_windows", "user_tokens"] {
        let q = format!("NOT EXISTS (SELECT 1 FROM {table} t WHERE row_to_json(t)::text LIKE '%{}%')", &key[5..]);
        assert!(sql_bool(&app, &q).await, "{table}");
    }
}

#[tokio::test]
async fn creating_a_key_below_advanced_is_plan_required() {
    let app = TestApp::spawn().await;
    for plan in [PlanTier::Free, PlanTier::Starter, PlanTier::Growth] {
        let ws = app.create_workspace(plan).await;
        let token = admin_token(&app, &ws).await;
        problem(create_key_raw(&app, ws.id, &token, &json!({"name": "ci"})).await, 403, "plan_required").await;
        // Listing still works, so a downgraded workspace can see and clean up its keys.
        assert_eq!(list(&app, ws.id, &token).await["data"], json!([]));
    }
}

#[tokio::test]
async fn bad_key_input_is_named() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let token = admin_token(&app, &ws).await;
    for (body, fields) in [
        (json!({}), vec!["name"]),
        (json!({"name": "   "}), vec!["name"]),
        (json!({"name": "x".repeat(101)}), vec!["name"]),
        (json!({"name": null}), vec!["name"]),
        (json!({"name": 7}), vec!["name"]),
        (json!({"name": "ci", "expires_at": "next week"}), vec!["expires_at"]),
        (json!({"name": "ci", "expires_at": "2020-01-01T00:00:00Z"}), vec!["expires_at"]),
        (json!({"name": "", "expires_at": "2020-01-01T00:00:00Z"}), vec!["name", "expires_at"]),
        (json!({"name": "ci", "expires_at": 1700000000}), vec!["expires_at"]),
        (json!({"name": "ci", "scopes": ["all"]}), vec!["scopes"]),
    ] {
        let res = create_key_raw(&app, ws.id, &token, &body).await;
        assert_eq!(error_fields(&problem(res, 422, "validation_failed").await), fields, "{body}");
    }
    assert_eq!(list(&app, ws.id, &token).await["data"], json!([]));
}

#[tokio::test]
async fn a_key_with_an_expiry_works_until_then_and_is_expired_after() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let (key, created) =
        create_key(&app, &ws, &json!({"name": "short", "expires_at": "2099-01-31T10:00:00+02:00"})).await;
    assert_eq!(created["expires_at"], "2099-01-31T08:00:00Z");
    assert_eq!(channels(&app, &key).await.status(), 200);

    // The expiry is reached (moved into the past rather than waited for).
    sql(&app, "UPDATE api_keys SET expires_at = now() - interval '1 second'").await;
    let res = channels(&app, &key).await;
    assert_eq!(header(&res, "www-authenticate").as_deref(), Some(r#"Bearer realm="wms", error="invalid_token""#));
    problem(res, 401, "token_expired").await;
    let token = admin_token(&app, &ws).await;
    assert_eq!(list(&app, ws.id, &token).await["data"][0]["state"], "expired");
}

#[tokio::test]
async fn revoking_keeps_the_record_and_stops_the_key_on_every_instance_at_once() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let (key, created) = create_key(&app, &ws, &json!({"name": "ci"})).await;
    let id = created["id"].as_i64().expect("id");
    let other = app.spawn_instance();
    assert_eq!(channels_with(&app, &other, &format!("Bearer {key}")).await.status(), 200);

    let token = admin_token(&app, &ws).await;
    let res = revoke(&app, ws.id, id, &token).await;
    assert_eq!(res.status(), 200);
    let revoked: Value = res.json().await.expect("json");
    assert_eq!(revoked["state"], "revoked");
    let revoked_at = revoked["revoked_at"].as_str().expect("revoked_at").to_owned();

    // The very next request on the other instance is refused.
    let res = channels_with(&app, &other, &format!("Bearer {key}")).await;
    assert_eq!(header(&res, "www-authenticate").as_deref(), Some(r#"Bearer realm="wms", error="invalid_token""#));
    problem(res, 401, "token_revoked").await;
    problem(channels(&app, &key).await, 401, "token_revoked").await;

    // The record stays; revoking again changes nothing.
    let listed = list(&app, ws.id, &token).await;
    assert_eq!(listed["data"][0]["state"], "revoked");
    let again: Value = revoke(&app, ws.id, id, &token).await.json().await.expect("json");
    assert_eq!(again["revoked_at"], revoked_at.as_str());
}

#[tokio::test]
async fn deleting_removes_the_record_for_valid_and_revoked_keys() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let (valid, a) = create_key(&app, &ws, &json!({"name": "valid"})).await;
    let (revoked, b) = create_key(&app, &ws, &json!({"name": "revoked"})).await;
    let token = admin_token(&app, &ws).await;
    let (a, b) = (a["id"].as_i64().expect("id"), b["id"].as_i64().expect("id"));
    assert_eq!(channels(&app, &valid).await.status(), 200);
    assert_eq!(revoke(&app, ws.id, b, &token).await.status(), 200);

    for (id, key) in [(a, &valid), (b, &revoked)] {
        assert_eq!(delete(&app, ws.id, id, &token).await.status(), 204);
        problem(channels(&app, key).await, 401, "invalid_token").await;
        problem(delete(&app, ws.id, id, &token).await, 404, "not_found").await;
    }
    assert_eq!(list(&app, ws.id, &token).await["data"], json!([]));
    assert!(
        sql_bool(&app, "NOT EXISTS (SELECT 1 FROM rate_limit_windows WHERE api_key_id IS NOT NULL)").await,
        "windows go with their keys"
    );
}

#[tokio::test]
async fn another_workspaces_key_is_not_found() {
    let app = TestApp::spawn().await;
    let mine = app.create_workspace(PlanTier::Advanced).await;
    let theirs = app.create_workspace(PlanTier::Advanced).await;
    let (their_key, created) = create_key(&app, &theirs, &json!({"name": "theirs"})).await;
    let id = created["id"].as_i64().expect("id");
    let token = admin_token(&app, &mine).await;
    problem(revoke(&app, mine.id, id, &token).await, 404, "not_found").await;
    problem(delete(&app, mine.id, id, &token).await, 404, "not_found").await;
    // And their workspace's path is not mine to use.
    problem(revoke(&app, theirs.id, id, &token).await, 404, "not_found").await;
    let res = app.client.get(app.url(&keys_url(theirs.id))).bearer_auth(&token).send().await.expect("request");
    problem(res, 404, "not_found").await;
    assert_eq!(channels(&app, &their_key).await.status(), 200);
}

#[tokio::test]
async fn only_admins_with_member_credentials_manage_keys() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let (key, created) = create_key(&app, &ws, &json!({"name": "ci"})).await;
    let id = created["id"].as_i64().expect("id");

    let (email, password) = add_member(&app, ws.id, "agent").await;
    let agent = token_for(&app, &email, &password, None).await;
    problem(create_key_raw(&app, ws.id, &agent, &json!({"name": "mine"})).await, 403, "forbidden").await;
    let res = app.client.get(app.url(&keys_url(ws.id))).bearer_auth(&agent).send().await.expect("request");
    problem(res, 403, "forbidden").await;
    problem(revoke(&app, ws.id, id, &agent).await, 403, "forbidden").await;
    problem(delete(&app, ws.id, id, &agent).await, 403, "forbidden").await;

    // An API key is not a member credential; one that is unknown or revoked is 401 as anywhere.
    problem(create_key_raw(&app, ws.id, &key, &json!({"name": "child"})).await, 403, "forbidden").await;
    let unknown = domain::auth::NewToken::generate(domain::auth::TokenKind::ApiKey, &app::platform::OsRandom).secret;
    let res = app.client.get(app.url(&keys_url(ws.id))).bearer_auth(&unknown).send().await.expect("request");
    assert_eq!(header(&res, "www-authenticate").as_deref(), Some(r#"Bearer realm="wms", error="invalid_token""#));
    problem(res, 401, "invalid_token").await;
    let (gone, made) = create_key(&app, &ws, &json!({"name": "gone"})).await;
    let admin = admin_token(&app, &ws).await;
    assert_eq!(revoke(&app, ws.id, made["id"].as_i64().expect("id"), &admin).await.status(), 200);
    let res = app.client.get(app.url(&keys_url(ws.id))).bearer_auth(&gone).send().await.expect("request");
    problem(res, 401, "token_revoked").await;
    // No credentials, or a session cookie nobody issued.
    let res = app.client.get(app.url(&keys_url(ws.id))).send().await.expect("request");
    assert_eq!(header(&res, "www-authenticate").as_deref(), Some(r#"Bearer realm="wms""#));
    problem(res, 401, "unauthenticated").await;
    let res =
        app.client.get(app.url(&keys_url(ws.id))).header("cookie", "wms_session=forged").send().await.expect("request");
    problem(res, 401, "unauthenticated").await;
    let res = app.client.get(app.url(&keys_url(ws.id))).bearer_auth("wmsu_nonsense").send().await.expect("request");
    problem(res, 401, "invalid_token").await;
}

#[tokio::test]
async fn last_use_is_recorded_and_lists_page() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let (key, _) = create_key(&app, &ws, &json!({"name": "one"})).await;
    create_key(&app, &ws, &json!({"name": "two"})).await;
    assert_eq!(channels(&app, &key).await.status(), 200);
    let token = admin_token(&app, &ws).await;

    let res = app.client.get(app.url(&format!("{}?limit=1", keys_url(ws.id)))).bearer_auth(&token).send().await;
    let page: Value = res.expect("request").json().await.expect("json");
    assert_eq!(page["data"][0]["name"], "two");
    assert!(page["data"][0]["last_used_at"].is_null());
    let cursor = page["next_cursor"].as_str().expect("cursor").to_owned();
    let res =
        app.client.get(app.url(&format!("{}?limit=1&cursor={cursor}", keys_url(ws.id)))).bearer_auth(&token).send();
    let page: Value = res.await.expect("request").json().await.expect("json");
    assert_eq!(page["data"][0]["name"], "one");
    assert!(page["data"][0]["last_used_at"].is_string());
    assert!(page["next_cursor"].is_null());

    let res = app.client.get(app.url(&format!("{}?limit=0", keys_url(ws.id)))).bearer_auth(&token).send().await;
    assert_eq!(error_fields(&problem(res.expect("request"), 422, "validation_failed").await), ["limit"]);
}

/// A `GET` with a key this instance admitted before runs its handler while its check runs
/// (`adapters-http/src/auth/v1.rs`); what it prepared must never reach a key that the check
/// refuses, and the refusal must win over the handler's own errors.
#[tokio::test]
async fn reads_prepared_ahead_of_the_check_never_reach_a_refused_key() {
    let app = TestApp::spawn_with(|s| s.rate_limit.requests_per_hour = 4).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let (key, created) = create_key(&app, &ws, &json!({"name": "ci"})).await;
    let channel = app.channel(&key, "whatsapp", "+14155550101", "active").await; // 1 of 4
    let one = format!("/v1/channels/{channel}");
    let get = |path: &str| app.client.get(app.url(path)).bearer_auth(&key).send();

    // Admitted: the key is now known here, and its handler errors come through as usual.
    assert_eq!(get(&one).await.expect("request").status(), 200); // 2 of 4
    let res = get("/v1/channels?limit=0").await.expect("request"); // 3 of 4
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("1"));
    problem(res, 422, "validation_failed").await;
    assert_eq!(get(&one).await.expect("request").status(), 200); // 4 of 4

    // Over the limit: the prepared page is dropped; the 429 carries the window.
    let res = get(&one).await.expect("request");
    assert_eq!(res.status(), 429);
    assert!(header(&res, "retry-after").is_some());
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("0"));
    let body = res.text().await.expect("body");
    assert!(!body.contains("+14155550101"), "{body}");
    assert!(body.contains("rate_limited"), "{body}");

    // Revoked after it was admitted: 401, not the handler's 422 or 200.
    let app2 = TestApp::spawn().await;
    let ws2 = app2.create_workspace(PlanTier::Advanced).await;
    let (key2, created2) = create_key(&app2, &ws2, &json!({"name": "ci"})).await;
    let channel2 = app2.channel(&key2, "whatsapp", "+14155550102", "active").await;
    let get2 = |path: &str| app2.client.get(app2.url(path)).bearer_auth(&key2).send();
    assert_eq!(get2(&format!("/v1/channels/{channel2}")).await.expect("request").status(), 200);
    let token = admin_token(&app2, &ws2).await;
    assert_eq!(revoke(&app2, ws2.id, created2["id"].as_i64().expect("id"), &token).await.status(), 200);
    let res = get2(&format!("/v1/channels/{channel2}")).await.expect("request");
    let body = problem(res, 401, "token_revoked").await;
    assert!(!body.to_string().contains("+14155550102"), "{body}");
    problem(get2("/v1/channels?limit=0").await.expect("request"), 401, "token_revoked").await;
    problem(get2("/v1/channels").await.expect("request"), 401, "token_revoked").await;
    assert!(created["id"].is_i64());
}
