//! Input at the edges of what wms can store or compute with, refused with a clear error naming
//! where it was, never a 500 or a dropped connection: text with the NUL character (`\u0000`, which
//! JSON and form encoding can carry but PostgreSQL cannot store or compare), and instants whose
//! UTC year leaves 0001–9998 (`time` panics past 9999).

use serde_json::{json, Value};

use crate::assistant_helpers::Demo;
use crate::helpers::{error_fields, test_template, TestApp};

async fn answer(res: reqwest::Response) -> (u16, Value) {
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn json_bodies_and_queries_with_the_nul_character_are_422_naming_the_field() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let mut template = test_template();
    template["parameters"] = json!(["x", "\u{0}"]);
    for (path, body, field) in [
        (
            "/v1/messages",
            json!({"channel_id": ch, "content": "a\u{0}b", "to": "+14155550123", "template": test_template()}),
            "content",
        ),
        (
            "/v1/messages",
            json!({"channel_id": ch, "content": "hi", "to": "+14155550123", "template": template}),
            "template.parameters[1]",
        ),
        ("/v1/contacts", json!({"name": "Ann\u{0}"}), "name"),
        ("/v1/labels", json!({"name": "vip\u{0}"}), "name"),
    ] {
        let (status, p) = answer(app.post_json(path, &key, &body).await).await;
        assert_eq!((status, error_fields(&p)), (422, vec![field.to_owned()]), "{path} {body}");
        assert_eq!(p["code"], "validation_failed");
    }
    let (status, p) = app.get_json("/v1/contacts?q=an%00", &key).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["q".to_owned()]), "{p}");
    let (status, p) = app.get_json("/v1/messages?channel_id=1&status=%00", &key).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["status".to_owned()]), "{p}");
    let (_, messages) = app.get_json("/v1/messages", &key).await;
    assert_eq!(messages["data"], json!([]), "nothing was stored");
}

#[tokio::test]
async fn an_assistant_tool_argument_with_the_nul_character_is_422_naming_it() {
    let demo = Demo::new().await;
    let res = demo
        .execute_raw(
            &json!({"tool": "get_contact_analytics", "arguments": {"email": "a@example.com", "label": "vip\u{0}"}}),
        )
        .await;
    let (status, p) = answer(res).await;
    assert_eq!(status, 422, "{p}");
    assert!(error_fields(&p).iter().any(|f| f.ends_with("label")), "{p}");
}

#[tokio::test]
async fn a_page_form_with_the_nul_character_is_refused_with_400() {
    let app = TestApp::spawn().await;
    let res =
        crate::pages::submit_form(&app, "/login", &[("email", "a\u{0}@example.com"), ("password", "x"), ("next", "")])
            .await;
    assert_eq!(res.status(), 400);
}

#[tokio::test]
async fn instants_past_the_years_wms_computes_with_are_422_naming_the_field() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let admin = crate::credentials::admin_token(&app, &ws).await;
    let late = "9999-12-31T23:59:59-01:00";
    let res = app
        .post_json(&format!("/api/workspaces/{}/api-keys", ws.id), &admin, &json!({"name": "x", "expires_at": late}))
        .await;
    let (status, p) = answer(res).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["expires_at".to_owned()]), "{p}");
    for path in [
        "/v1/reports/conversations?since=9999-12-31T01:00:00Z&until=9999-12-31T02:00:00Z",
        "/v1/reports/conversations.csv?since=9999-12-31T01:00:00Z&until=9999-12-31T02:00:00Z",
    ] {
        let (status, p) = answer(app.authed(reqwest::Method::GET, path, &admin).send().await.expect("request")).await;
        let mut fields = error_fields(&p);
        fields.sort();
        assert_eq!((status, fields), (422, vec!["since".to_owned(), "until".to_owned()]), "{path} {p}");
    }
    let until = "/v1/reports/conversations?until=9999-12-31T23:00:00-05:00";
    let (status, p) = answer(app.authed(reqwest::Method::GET, until, &admin).send().await.expect("request")).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["until".to_owned()]), "{p}");
    for (path, field) in [
        (format!("/v1/audit-events?since={}", "9999-12-31T23:59:59-01:00".replace('+', "%2B")), "since"),
        ("/v1/contacts?updated_since=9999-12-31T23:59:59-01:00".to_owned(), "updated_since"),
        ("/v1/messages?since=0000-01-01T00:00:00%2B01:00".to_owned(), "since"),
    ] {
        let (status, p) = answer(app.authed(reqwest::Method::GET, &path, &admin).send().await.expect("request")).await;
        assert_eq!((status, error_fields(&p)), (422, vec![field.to_owned()]), "{path} {p}");
    }
    let (_, threads) = app.get_json("/v1/threads", &key).await;
    assert!(threads["data"].is_array());
    app.contact_wrote(app.channel(&key, "whatsapp", "+14155550101", "active").await, "+14155550123").await;
    let (_, threads) = app.get_json("/v1/threads", &key).await;
    let thread = threads["data"][0]["id"].as_i64().expect("thread");
    let res = app
        .authed(reqwest::Method::PATCH, &format!("/v1/threads/{thread}"), &key)
        .json(&json!({"status": "snoozed", "snoozed_until": late}))
        .send()
        .await
        .expect("request");
    let (status, p) = answer(res).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["snoozed_until".to_owned()]), "{p}");
}
