//! `/v1/labels`: create, list, rename, recolour and delete; names unique ignoring case; a deleted
//! label leaves every thread.

use reqwest::Method;
use serde_json::{json, Value};

use crate::credentials::{add_member, token_for};
use crate::helpers::{error_fields, problem, TestApp};

async fn send(app: &TestApp, method: Method, path: &str, key: &str, body: Option<Value>) -> reqwest::Response {
    let req = app.authed(method, path, key);
    let req = match body {
        Some(b) => req.json(&b),
        None => req,
    };
    req.send().await.expect("request")
}

/// Creates a label and returns its record.
pub async fn label(app: &TestApp, key: &str, name: &str) -> Value {
    let res = app.post_json("/v1/labels", key, &json!({"name": name})).await;
    assert_eq!(res.status(), 201, "create label {name}");
    res.json().await.expect("json")
}

/// A new thread (through a first outbound message to `to`) and its id.
pub async fn thread(app: &TestApp, key: &str, channel: i64, to: &str) -> i64 {
    let body = json!({"channel_id": channel, "content": "Hi", "to": to, "template": crate::helpers::test_template()});
    let res = app.post_json("/v1/messages", key, &body).await;
    assert_eq!(res.status(), 201, "message");
    res.json::<Value>().await.expect("json")["thread_id"].as_i64().expect("thread id")
}

#[tokio::test]
async fn labels_are_created_listed_changed_and_deleted() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let res = app.post_json("/v1/labels", &key, &json!({"name": " VIP ", "color": "#22C55E"})).await;
    assert_eq!(res.status(), 201);
    let vip: Value = res.json().await.expect("json");
    let mut keys: Vec<&str> = vip.as_object().expect("object").keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["color", "created_at", "id", "name"]);
    assert_eq!((&vip["name"], &vip["color"]), (&json!("VIP"), &json!("#22c55e")));
    let billing = label(&app, &key, "billing").await;
    assert_eq!(billing["color"], "#6b7280", "a label without colour is grey");

    let (status, list) = app.get_json("/v1/labels?limit=1", &key).await;
    assert_eq!((status, list["data"][0]["id"].clone()), (200, vip["id"].clone()));
    let cursor = list["next_cursor"].as_str().expect("a second page");
    let (_, next) = app.get_json(&format!("/v1/labels?limit=1&cursor={cursor}"), &key).await;
    assert_eq!((next["data"][0]["id"].clone(), next["next_cursor"].clone()), (billing["id"].clone(), Value::Null));

    let path = format!("/v1/labels/{}", billing["id"]);
    let res = send(&app, Method::PATCH, &path, &key, Some(json!({"name": "accounts", "color": "#ef4444"}))).await;
    assert_eq!(res.status(), 200);
    let changed: Value = res.json().await.expect("json");
    assert_eq!(
        (&changed["name"], &changed["color"], &changed["id"]),
        (&json!("accounts"), &json!("#ef4444"), &billing["id"])
    );
    let res = send(&app, Method::PATCH, &path, &key, Some(json!({"color": "#000000"}))).await;
    assert_eq!(res.json::<Value>().await.expect("json")["name"], "accounts", "an omitted field is kept");

    // Names are unique ignoring case, on create and on rename.
    problem(app.post_json("/v1/labels", &key, &json!({"name": "vip"})).await, 409, "conflict").await;
    problem(send(&app, Method::PATCH, &path, &key, Some(json!({"name": "Vip"}))).await, 409, "conflict").await;

    let res = send(&app, Method::DELETE, &path, &key, None).await;
    assert_eq!(res.status(), 204);
    problem(send(&app, Method::DELETE, &path, &key, None).await, 404, "not_found").await;
    problem(send(&app, Method::PATCH, &path, &key, Some(json!({"name": "x"}))).await, 404, "not_found").await;
}

#[tokio::test]
async fn a_deleted_label_leaves_its_threads() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let t = thread(&app, &key, ch, "+14155550123").await;
    let vip = label(&app, &key, "vip").await;
    label(&app, &key, "billing").await;
    let res =
        send(&app, Method::PUT, &format!("/v1/threads/{t}/labels"), &key, Some(json!({"labels": ["vip", "billing"]})))
            .await;
    assert_eq!(res.json::<Value>().await.expect("json")["labels"], json!(["billing", "vip"]));

    let res = send(&app, Method::DELETE, &format!("/v1/labels/{}", vip["id"]), &key, None).await;
    assert_eq!(res.status(), 204);
    let (_, thread) = app.get_json(&format!("/v1/threads/{t}"), &key).await;
    assert_eq!(thread["labels"], json!(["billing"]));
    let p = problem(
        app.authed(Method::GET, "/v1/threads?label=vip", &key).send().await.expect("request"),
        422,
        "validation_failed",
    )
    .await;
    assert_eq!(error_fields(&p), ["label"]);
}

#[tokio::test]
async fn bad_label_input_is_named() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let id = label(&app, &key, "vip").await["id"].clone();
    for (body, fields) in [
        (json!({"name": "ok", "color": "red"}), vec!["color"]),
        (json!({"name": "ok", "color": "#12345"}), vec!["color"]),
        (json!({"name": "  "}), vec!["name"]),
        (json!({"name": "x".repeat(51)}), vec!["name"]),
        (json!({"name": "", "color": "#zzzzzz"}), vec!["name", "color"]),
        (json!({"name": "ok", "colour": "#ffffff"}), vec!["colour"]),
        (json!({}), vec!["name"]),
    ] {
        let p = problem(app.post_json("/v1/labels", &key, &body).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), fields, "{body}");
    }
    for (body, field) in [(json!({}), "body"), (json!({"color": "blue"}), "color"), (json!({"name": ""}), "name")] {
        let res = send(&app, Method::PATCH, &format!("/v1/labels/{id}"), &key, Some(body.clone())).await;
        let p = problem(res, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), [field], "{body}");
    }
    let p = problem(
        app.authed(Method::GET, "/v1/labels?limit=0", &key).send().await.expect("request"),
        422,
        "validation_failed",
    )
    .await;
    assert_eq!(error_fields(&p), ["limit"]);
    let (_, list) = app.get_json("/v1/labels", &key).await;
    assert_eq!(list["data"].as_array().map(Vec::len), Some(1), "nothing was written");
}

#[tokio::test]
async fn another_workspaces_labels_are_not_found_nor_listed() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let (_, other_key) = app.advanced_with_key().await;
    let id = label(&app, &key, "vip").await["id"].clone();
    let path = format!("/v1/labels/{id}");
    problem(send(&app, Method::PATCH, &path, &other_key, Some(json!({"name": "mine"}))).await, 404, "not_found").await;
    problem(send(&app, Method::DELETE, &path, &other_key, None).await, 404, "not_found").await;
    let (_, list) = app.get_json("/v1/labels", &other_key).await;
    assert_eq!(list["data"], json!([]));
    // The same name is free in another workspace.
    label(&app, &other_key, "vip").await;
}

#[tokio::test]
async fn labels_follow_the_scopes_and_the_agent_role() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let reader = app.api_key_with_scopes(&ws, &["labels:read"]).await;
    let (status, _) = app.get_json("/v1/labels", &reader).await;
    assert_eq!(status, 200);
    let res = app.post_json("/v1/labels", &reader, &json!({"name": "vip"})).await;
    let www = res.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    problem(res, 403, "insufficient_scope").await;
    assert!(www.contains("scope=\"labels:write\""), "{www}");
    let writer = app.api_key_with_scopes(&ws, &["labels:write"]).await;
    label(&app, &writer, "vip").await;
    let threads_only = app.api_key_with_scopes(&ws, &["threads:read"]).await;
    problem(
        app.authed(Method::GET, "/v1/labels", &threads_only).send().await.expect("request"),
        403,
        "insufficient_scope",
    )
    .await;

    // docs/contract.md: agents read labels and label threads, but only admins manage labels.
    let (email, password) = add_member(&app, ws.id, "agent").await;
    let agent = token_for(&app, &email, &password, Some(ws.id)).await;
    let (status, _) = app.get_json("/v1/labels", &agent).await;
    assert_eq!(status, 200);
    problem(app.post_json("/v1/labels", &agent, &json!({"name": "mine"})).await, 403, "forbidden").await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let t = thread(&app, &key, ch, "+14155550123").await;
    let res =
        send(&app, Method::PUT, &format!("/v1/threads/{t}/labels"), &agent, Some(json!({"labels": ["vip"]}))).await;
    assert_eq!(res.status(), 200, "an agent labels threads");
}

/// A name given exactly as stored is always found, whatever letters it has: both sides of every
/// comparison are lowered by PostgreSQL, the rule of the unique index on names. (Lowered by Rust on
/// one side, `ΟΔΟΣ` became `οδος` against PostgreSQL's `οδοσ`, and the label was "unknown".)
#[tokio::test]
async fn names_with_any_letters_are_found_as_stored() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let t = thread(&app, &key, ch, "+14155550123").await;
    assert_eq!(send(&app, Method::POST, "/v1/labels", &key, Some(json!({"name": "ΟΔΟΣ"}))).await.status(), 201);
    let path = format!("/v1/threads/{t}/labels");
    let res = send(&app, Method::PUT, &path, &key, Some(json!({"labels": ["ΟΔΟΣ"]}))).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.expect("json")["labels"], json!(["ΟΔΟΣ"]));
    let (status, threads) = app.get_json("/v1/threads?label=%CE%9F%CE%94%CE%9F%CE%A3", &key).await;
    assert_eq!((status, threads["data"][0]["id"].as_i64()), (200, Some(t)), "{threads}");
    let (status, contacts) = app.get_json("/v1/contacts?label=%CE%9F%CE%94%CE%9F%CE%A3", &key).await;
    assert_eq!((status, contacts["data"].as_array().map(Vec::len)), (200, Some(1)), "{contacts}");
    let body = json!({"name": "Émile Zola", "email": "emile@example.com"});
    assert_eq!(app.post_json("/v1/contacts", &key, &body).await.status(), 201);
    let (_, found) = app.get_json("/v1/contacts?q=%C3%89mile", &key).await;
    assert_eq!(found["data"][0]["name"], "Émile Zola", "{found}");
}
