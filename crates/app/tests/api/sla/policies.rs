//! `/v1/sla-policies`: create, list, change, delete; bad input named; who may.

use reqwest::Method;
use serde_json::{json, Value};

use super::{policy, user_token};
use crate::helpers::{error_fields, problem, TestApp};

async fn patch(app: &TestApp, key: &str, id: i64, body: Value) -> reqwest::Response {
    app.authed(Method::PATCH, &format!("/v1/sla-policies/{id}"), key).json(&body).send().await.expect("request")
}

#[tokio::test]
async fn sla_policies_are_created_listed_changed_and_deleted_with_audit_records() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    assert_eq!(app.post_json("/v1/labels", &key, &json!({"name": "VIP"})).await.status(), 201);
    let gold = policy(
        &app,
        &key,
        json!({"name": " Gold ", "first_response_seconds": 3600, "resolution_seconds": 86400,
               "business_hours": true, "channel_ids": [ch, ch], "labels": ["vip"]}),
    )
    .await;
    assert_eq!(gold["name"], "Gold");
    assert_eq!(
        (&gold["first_response_seconds"], &gold["next_response_seconds"], &gold["resolution_seconds"]),
        (&json!(3600), &Value::Null, &json!(86400))
    );
    assert_eq!(
        (&gold["business_hours"], &gold["channel_ids"], &gold["labels"]),
        (&json!(true), &json!([ch]), &json!(["VIP"]))
    );
    let fields: Vec<&str> = gold.as_object().expect("object").keys().map(String::as_str).collect();
    let mut fields = fields;
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "business_hours",
            "channel_ids",
            "created_at",
            "first_response_seconds",
            "id",
            "labels",
            "name",
            "next_response_seconds",
            "resolution_seconds"
        ]
    );
    let basic = policy(&app, &key, json!({"name": "Basic", "next_response_seconds": 600})).await;
    let (status, list) = app.get_json("/v1/sla-policies", &key).await;
    assert_eq!(status, 200);
    let ids: Vec<&Value> = list["data"].as_array().expect("data").iter().map(|p| &p["id"]).collect();
    assert_eq!(ids, [&gold["id"], &basic["id"]], "by id");
    let id = gold["id"].as_i64().expect("id");
    let res =
        patch(&app, &key, id, json!({"first_response_seconds": null, "next_response_seconds": 120, "labels": []}))
            .await;
    assert_eq!(res.status(), 200);
    let changed: Value = res.json().await.expect("json");
    assert_eq!(
        (&changed["first_response_seconds"], &changed["next_response_seconds"], &changed["labels"], &changed["name"]),
        (&Value::Null, &json!(120), &json!([]), &json!("Gold"))
    );
    assert_eq!(
        app.authed(Method::DELETE, &format!("/v1/sla-policies/{id}"), &key).send().await.expect("req").status(),
        204
    );
    assert_eq!(app.get_json("/v1/sla-policies", &key).await.1["data"].as_array().map(Vec::len), Some(1));
    for action in ["sla_policy.created", "sla_policy.updated", "sla_policy.deleted"] {
        let (_, audit) = app.get_json(&format!("/v1/audit-events?action={action}"), &key).await;
        let records = audit["data"].as_array().expect("records");
        assert!(!records.is_empty(), "{action}: {audit}");
        assert_eq!(records[0]["target"]["type"], "sla_policy", "{action}: {audit}");
    }
}

#[tokio::test]
async fn bad_sla_policies_are_refused_naming_the_field() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let (_, other_key) = app.advanced_with_key().await;
    let theirs = app.channel(&other_key, "whatsapp", "+14155550109", "active").await;
    for (body, field) in [
        (json!({"name": "x", "first_response_seconds": 0}), "first_response_seconds"),
        (json!({"name": "x", "next_response_seconds": -60}), "next_response_seconds"),
        (json!({"name": "x", "resolution_seconds": 31_536_001}), "resolution_seconds"),
        (json!({"name": "x"}), "first_response_seconds"),
        (json!({"name": "", "resolution_seconds": 60}), "name"),
        (json!({"name": "x", "resolution_seconds": 60, "channel_ids": [theirs]}), "channel_ids"),
        (json!({"name": "x", "resolution_seconds": 60, "labels": ["nope"]}), "labels"),
        (json!({"name": "x", "resolution_seconds": "soon"}), "resolution_seconds"),
    ] {
        let p = problem(app.post_json("/v1/sla-policies", &key, &body).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), [field], "{body}");
    }
    assert_eq!(app.get_json("/v1/sla-policies", &key).await.1["data"], json!([]), "nothing was created");
    let mine = policy(&app, &key, json!({"name": "Mine", "first_response_seconds": 60})).await;
    let id = mine["id"].as_i64().expect("id");
    let p =
        problem(patch(&app, &key, id, json!({"first_response_seconds": null})).await, 422, "validation_failed").await;
    assert_eq!(error_fields(&p), ["first_response_seconds"], "a policy keeps a target");
    let p = problem(patch(&app, &key, id, json!({})).await, 422, "validation_failed").await;
    assert_eq!(error_fields(&p), ["body"]);
    let p = problem(patch(&app, &key, id, json!({"channel_ids": [theirs]})).await, 422, "validation_failed").await;
    assert_eq!(error_fields(&p), ["channel_ids"]);
    problem(patch(&app, &other_key, id, json!({"name": "Theirs"})).await, 404, "not_found").await;
    let gone = app.authed(Method::DELETE, &format!("/v1/sla-policies/{id}"), &other_key).send().await.expect("req");
    problem(gone, 404, "not_found").await;
    assert_eq!(
        app.get_json("/v1/sla-policies", &other_key).await.1["data"],
        json!([]),
        "another workspace's are unseen"
    );
}

#[tokio::test]
async fn admins_and_settings_write_keys_manage_sla_policies_and_no_one_else() {
    let app = TestApp::spawn().await;
    let (ws, _) = app.advanced_with_key().await;
    let body = json!({"name": "Gold", "first_response_seconds": 60});
    let admin = user_token(&app, ws.id, ws.admin_id).await;
    assert_eq!(app.post_json("/v1/sla-policies", &admin, &body).await.status(), 201);
    let writer = app.api_key_with_scopes(&ws, &["settings:write"]).await;
    assert_eq!(app.post_json("/v1/sla-policies", &writer, &body).await.status(), 201);
    assert_eq!(app.get_json("/v1/sla-policies", &writer).await.0, 200);
    let reader = app.api_key_with_scopes(&ws, &["settings:read", "threads:write"]).await;
    problem(app.post_json("/v1/sla-policies", &reader, &body).await, 403, "insufficient_scope").await;
    problem(app.authed(Method::GET, "/v1/sla-policies", &reader).send().await.expect("req"), 403, "insufficient_scope")
        .await;
    let agent = crate::lifecycle::add_agent(&app, ws.id).await;
    let agent = user_token(&app, ws.id, agent).await;
    problem(app.post_json("/v1/sla-policies", &agent, &body).await, 403, "forbidden").await;
    problem(app.authed(Method::GET, "/v1/sla-policies", &agent).send().await.expect("req"), 403, "forbidden").await;
    problem(app.get("/v1/sla-policies").await, 401, "unauthenticated").await;
    assert_eq!(app.get_json("/v1/sla-policies", &admin).await.1["data"].as_array().map(Vec::len), Some(2));
}
