//! The destinations API: plan gating, validation (event catalog, URL rules, SSRF at creation),
//! CRUD, secrets and workspace isolation, on `/v1/webhooks` and the settings API.

use base64::Engine;
use domain::workspace::PlanTier;
use reqwest::Method;
use serde_json::{json, Value};

use crate::credentials::{add_member, admin_token, token_for};
use crate::helpers::{error_fields, problem, TestApp};

/// A public address that needs no DNS (never contacted by these tests).
const PUBLIC_URL: &str = "https://93.184.215.14/hooks/wms";

fn body(url: &str, events: &[&str]) -> Value {
    json!({"url": url, "platform": "custom", "events": events, "active": true})
}

/// The `Cache-Control` of an answer.
fn no_store(res: &reqwest::Response) -> Option<&str> {
    res.headers().get("cache-control").and_then(|v| v.to_str().ok())
}

async fn create(app: &TestApp, key: &str, b: &Value) -> reqwest::Response {
    app.post_json("/v1/webhooks", key, b).await
}

async fn create_ok(app: &TestApp, key: &str) -> Value {
    let res = create(app, key, &body(PUBLIC_URL, &["message.created", "thread.assigned"])).await;
    assert_eq!(res.status(), 201);
    res.json().await.expect("json")
}

#[tokio::test]
async fn webhooks_settings_api_needs_growth() {
    let app = TestApp::spawn().await;
    for plan in [PlanTier::Free, PlanTier::Starter] {
        let ws = app.create_workspace(plan).await;
        let token = admin_token(&app, &ws).await;
        let path = format!("/api/workspaces/{}/webhooks", ws.id);
        let res = app.authed(Method::GET, &path, &token).send().await.expect("request");
        problem(res, 403, "plan_required").await;
        let res = app.post_json(&path, &token, &body(PUBLIC_URL, &["message.created"])).await;
        problem(res, 403, "plan_required").await;
    }
}

#[tokio::test]
async fn growth_admins_manage_webhooks_in_settings_with_the_v1_bodies() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Growth).await;
    let token = admin_token(&app, &ws).await;
    let base = format!("/api/workspaces/{}/webhooks", ws.id);
    let res = app.post_json(&base, &token, &body(PUBLIC_URL, &["contact.created"])).await;
    assert_eq!(res.status(), 201);
    assert_eq!(no_store(&res), Some("no-store"), "the answer holds the secret");
    let created: Value = res.json().await.expect("json");
    let id = created["id"].as_i64().expect("id");
    assert!(created["secret"].as_str().is_some_and(|s| s.starts_with("whsec_")));

    let (status, list) = app.get_json(&base, &token).await;
    assert_eq!(status, 200);
    assert_eq!(list["data"][0]["id"], id);
    let res = app
        .authed(Method::PATCH, &format!("{base}/{id}"), &token)
        .json(&json!({"active": false}))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    let (status, secret) = app.get_json(&format!("{base}/{id}/secret"), &token).await;
    assert_eq!((status, &secret["secret"]), (200, &created["secret"]));
    // Growth has no REST API: the same token on /v1 is refused.
    let res = app.authed(Method::GET, "/v1/webhooks", &token).send().await.expect("request");
    problem(res, 403, "plan_required").await;
    let res = app.authed(Method::DELETE, &format!("{base}/{id}"), &token).send().await.expect("request");
    assert_eq!(res.status(), 204);
}

#[tokio::test]
async fn agents_cannot_manage_webhooks() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let (email, password) = add_member(&app, ws.id, "agent").await;
    let token = token_for(&app, &email, &password, Some(ws.id)).await;
    let res =
        app.authed(Method::GET, &format!("/api/workspaces/{}/webhooks", ws.id), &token).send().await.expect("req");
    problem(res, 403, "forbidden").await;
    let res = app.authed(Method::GET, "/v1/webhooks", &token).send().await.expect("request");
    problem(res, 403, "forbidden").await;
}

#[tokio::test]
async fn create_returns_the_record_and_a_secret_that_can_be_revealed() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let res = create(&app, &key, &body(PUBLIC_URL, &["message.created", "thread.assigned"])).await;
    assert_eq!(res.status(), 201);
    assert_eq!(no_store(&res), Some("no-store"), "the answer holds the secret");
    let location = res.headers().get("location").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let created: Value = res.json().await.expect("json");
    let id = created["id"].as_i64().expect("id");
    assert_eq!(location, format!("/v1/webhooks/{id}"));
    let mut keys: Vec<&str> = created.as_object().expect("object").keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "active",
            "created_at",
            "disabled_at",
            "disabled_reason",
            "events",
            "filter",
            "headers",
            "id",
            "max_in_flight",
            "ordering",
            "platform",
            "rate_limit_per_second",
            "secret",
            "updated_at",
            "url"
        ]
    );
    assert_eq!(created["url"], PUBLIC_URL);
    assert_eq!(created["events"], json!(["message.created", "thread.assigned"]));
    let secret = created["secret"].as_str().expect("secret");
    let raw = base64::engine::general_purpose::STANDARD.decode(secret.strip_prefix("whsec_").expect("prefix"));
    assert!(raw.is_ok_and(|k| (24..=64).contains(&k.len())));

    let (status, got) = app.get_json(&format!("/v1/webhooks/{id}"), &key).await;
    assert_eq!(status, 200);
    assert_eq!(got["url"], created["url"]);
    assert!(got.get("secret").is_none(), "the record never carries the secret");
    let (status, revealed) = app.get_json(&format!("/v1/webhooks/{id}/secret"), &key).await;
    assert_eq!((status, revealed["secret"].as_str()), (200, Some(secret)));

    // Defaults: platform `custom`, active.
    let res = create(&app, &key, &json!({"url": PUBLIC_URL, "events": ["contact.updated"]})).await;
    let d: Value = res.json().await.expect("json");
    assert_eq!((d["platform"].as_str(), d["active"].as_bool()), (Some("custom"), Some(true)));
}

#[tokio::test]
async fn unknown_event_names_are_refused_naming_them() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let res = create(&app, &key, &body(PUBLIC_URL, &["message.created", "message.deleted", "thread.exploded"])).await;
    let p = problem(res, 422, "validation_failed").await;
    assert_eq!(error_fields(&p), ["events[1]", "events[2]"]);
    let text = p.to_string();
    assert!(text.contains("message.deleted") && text.contains("thread.exploded"), "{text}");

    for events in [json!([]), json!(["webhook.test"])] {
        let res = create(&app, &key, &json!({"url": PUBLIC_URL, "events": events})).await;
        problem(res, 422, "validation_failed").await;
    }
    let res = create(&app, &key, &json!({"url": PUBLIC_URL})).await;
    let p = problem(res, 422, "validation_failed").await;
    assert_eq!(error_fields(&p), ["events"]);
}

#[tokio::test]
async fn urls_must_be_absolute_https_public_and_at_most_2048_characters() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let long = format!("https://93.184.215.14/{}", "a".repeat(2040));
    for url in [
        "http://93.184.215.14/plain-http",
        "ftp://93.184.215.14/",
        "/relative/path",
        "not a url",
        long.as_str(),
        "https://10.0.0.1/private",
        "https://192.168.1.10/",
        "https://169.254.169.254/latest/meta-data",
        "https://100.64.0.1/cgnat",
        "https://127.0.0.1/",
        "https://[::1]/",
        "https://[fd00::1]/",
        "https://224.0.0.1/",
        "https://192.0.2.1/documentation",
        // A name that resolves to 127.0.0.1 while loopback is not allowed.
        "https://localhost:8443/hook",
    ] {
        let res = create(&app, &key, &body(url, &["message.created"])).await;
        let p = problem(res, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), ["url"], "{url}: {p}");
    }
    let res = create(&app, &key, &body("https://localhost:8443/hook", &["message.created"])).await;
    let p = problem(res, 422, "validation_failed").await;
    // Refused without naming what the name resolves to: internal addresses are not the tenant's
    // to learn.
    let message = p["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("private, loopback or otherwise reserved address"), "{p}");
    assert!(!p.to_string().contains("127.0.0.1") && !p.to_string().contains("::1"), "{p}");
}

#[tokio::test]
async fn allowed_subnets_permit_loopback_and_plain_http() {
    let app = TestApp::spawn_with(|s| s.webhooks.allowed_subnets = Some("127.0.0.0/8,::1/128".into())).await;
    let (_, key) = app.advanced_with_key().await;
    for url in ["http://127.0.0.1:9/hook", "http://localhost:9/hook", "https://[::1]:9/"] {
        let res = create(&app, &key, &body(url, &["message.created"])).await;
        assert_eq!(res.status(), 201, "{url}");
    }
    let res = create(&app, &key, &body("http://10.0.0.1/", &["message.created"])).await;
    problem(res, 422, "validation_failed").await;
}

#[tokio::test]
async fn another_workspaces_destination_is_not_found() {
    let app = TestApp::spawn().await;
    let (_, key_a) = app.advanced_with_key().await;
    let (_, key_b) = app.advanced_with_key().await;
    let id = create_ok(&app, &key_a).await["id"].as_i64().expect("id");
    for (method, path) in [
        (Method::GET, format!("/v1/webhooks/{id}")),
        (Method::PATCH, format!("/v1/webhooks/{id}")),
        (Method::DELETE, format!("/v1/webhooks/{id}")),
        (Method::GET, format!("/v1/webhooks/{id}/secret")),
        (Method::POST, format!("/v1/webhooks/{id}/secret/rotate")),
        (Method::GET, format!("/v1/webhooks/{id}/deliveries")),
        (Method::POST, format!("/v1/webhooks/{id}/test")),
        (Method::POST, format!("/v1/webhooks/{id}/deliveries/1/retry")),
    ] {
        let res = app.authed(method.clone(), &path, &key_b).json(&json!({"active": false})).send().await.expect("req");
        problem(res, 404, "not_found").await;
    }
    let (status, list) = app.get_json("/v1/webhooks", &key_b).await;
    assert_eq!((status, list["data"].as_array().map(Vec::len)), (200, Some(0)));
    let (status, _) = app.get_json(&format!("/v1/webhooks/{id}"), &key_a).await;
    assert_eq!(status, 200, "still there for its owner");
}

#[tokio::test]
async fn update_changes_only_the_given_members_and_delete_removes() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let created = create_ok(&app, &key).await;
    let id = created["id"].as_i64().expect("id");
    let path = format!("/v1/webhooks/{id}");
    let patch = |b: Value| app.authed(Method::PATCH, &path, &key).json(&b).send();

    let res =
        patch(json!({"events": ["contact.created", "channel.updated"], "platform": "zapier"})).await.expect("req");
    assert_eq!(res.status(), 200);
    let d: Value = res.json().await.expect("json");
    assert_eq!(d["events"], json!(["contact.created", "channel.updated"]));
    assert_eq!(
        (d["platform"].as_str(), d["url"].as_str(), d["active"].as_bool()),
        (Some("zapier"), Some(PUBLIC_URL), Some(true))
    );

    let res = patch(json!({"active": false})).await.expect("req");
    let d: Value = res.json().await.expect("json");
    assert_eq!(d["active"], false);
    assert!(d["disabled_at"].is_string());
    assert!(d["disabled_reason"].is_null(), "a person paused it");

    let res = patch(json!({"events": ["nope.never"]})).await.expect("req");
    let p = problem(res, 422, "validation_failed").await;
    assert_eq!(error_fields(&p), ["events[0]"]);
    let res = patch(json!({"url": "https://10.1.1.1/"})).await.expect("req");
    problem(res, 422, "validation_failed").await;
    let res = patch(json!({"colour": "red"})).await.expect("req");
    problem(res, 422, "validation_failed").await;

    let res = app.authed(Method::DELETE, &path, &key).send().await.expect("req");
    assert_eq!(res.status(), 204);
    let res = app.authed(Method::GET, &path, &key).send().await.expect("req");
    problem(res, 404, "not_found").await;
}

#[tokio::test]
async fn rotation_replaces_the_revealed_secret() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let created = create_ok(&app, &key).await;
    let id = created["id"].as_i64().expect("id");
    let res = app.post_json(&format!("/v1/webhooks/{id}/secret/rotate"), &key, &json!({})).await;
    assert_eq!(res.status(), 200);
    assert_eq!(no_store(&res), Some("no-store"));
    let rotated: Value = res.json().await.expect("json");
    assert!(rotated["secret"].as_str().is_some_and(|s| s.starts_with("whsec_")));
    assert_ne!(rotated["secret"], created["secret"]);
    let (_, revealed) = app.get_json(&format!("/v1/webhooks/{id}/secret"), &key).await;
    assert_eq!(revealed["secret"], rotated["secret"]);
}

#[tokio::test]
async fn destinations_are_listed_with_cursor_pagination() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(create_ok(&app, &key).await["id"].as_i64().expect("id"));
    }
    let (status, first) = app.get_json("/v1/webhooks?limit=2", &key).await;
    assert_eq!(status, 200);
    let got: Vec<i64> = first["data"].as_array().expect("data").iter().filter_map(|d| d["id"].as_i64()).collect();
    assert_eq!(got, ids[..2]);
    let cursor = first["next_cursor"].as_str().expect("cursor");
    let (_, second) = app.get_json(&format!("/v1/webhooks?limit=2&cursor={cursor}"), &key).await;
    assert_eq!(second["data"][0]["id"], ids[2]);
    assert!(second["next_cursor"].is_null());
    for q in ["limit=0", "limit=101", "cursor=garbage"] {
        let res = app.authed(Method::GET, &format!("/v1/webhooks?{q}"), &key).send().await.expect("req");
        problem(res, 422, "validation_failed").await;
    }
}
