//! `/v1/contacts`, the contacts' REST API for integrators: the record, every filter and bad input, uniqueness, access, events,
//! and erasure that leaves no trace of the person while every count stays as it was.

use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;
use domain::analytics::CountryStats;
use domain::workspace::WorkspaceId;
use reqwest::Method;
use serde_json::{json, Value};

use crate::assistant_helpers::{exec, execute_path};
use crate::credentials::{add_member, token_for};
use crate::helpers::{error_fields, problem, TestApp};

mod erasure;
mod erasure_exact;

const RECORD_KEYS: [&str; 11] = [
    "country",
    "created_at",
    "email",
    "first_contacted_at",
    "id",
    "language",
    "last_contacted_at",
    "name",
    "note",
    "phone",
    "updated_at",
];

async fn create(app: &TestApp, key: &str, body: Value) -> reqwest::Response {
    app.post_json("/v1/contacts", key, &body).await
}

async fn created(app: &TestApp, key: &str, body: Value) -> Value {
    let res = create(app, key, body.clone()).await;
    assert_eq!(res.status(), 201, "{body}");
    res.json().await.expect("json")
}

async fn patch(app: &TestApp, key: &str, id: &Value, body: Value) -> reqwest::Response {
    app.authed(Method::PATCH, &format!("/v1/contacts/{id}"), key).json(&body).send().await.expect("request")
}

async fn delete(app: &TestApp, key: &str, id: &Value) -> reqwest::Response {
    app.authed(Method::DELETE, &format!("/v1/contacts/{id}"), key).send().await.expect("request")
}

/// The ids a listing answers, after checking the envelope.
async fn ids(app: &TestApp, key: &str, query: &str) -> Vec<i64> {
    let (status, body) = app.get_json(&format!("/v1/contacts?{query}"), key).await;
    assert_eq!(status, 200, "{query}: {body}");
    body["data"].as_array().expect("data").iter().map(|c| c["id"].as_i64().expect("id")).collect()
}

async fn subscribe_all(app: &TestApp, key: &str) {
    let body = json!({"url": "https://hooks.example.com/contacts", "platform": "custom", "events": [
        "contact.created", "contact.updated", "contact.deleted", "message.created", "message.status_updated",
        "thread.created"]});
    assert_eq!(app.post_json("/v1/webhooks", key, &body).await.status(), 201);
}

#[derive(diesel::QueryableByName)]
struct Event {
    #[diesel(sql_type = Text)]
    event_type: String,
    #[diesel(sql_type = Text)]
    payload: String,
}

async fn events(app: &TestApp, ws: i64) -> Vec<(String, Value)> {
    let mut conn = app.db.conn().await.expect("conn");
    let rows: Vec<Event> =
        diesel::sql_query("SELECT event_type, payload FROM webhook_events WHERE workspace_id = $1 ORDER BY id")
            .bind::<BigInt, _>(ws)
            .load(&mut conn)
            .await
            .expect("events");
    rows.into_iter()
        .map(|e| (e.event_type, serde_json::from_str::<Value>(&e.payload).expect("payload")["data"].clone()))
        .collect()
}

#[tokio::test]
async fn contacts_are_created_read_and_changed_with_events_carrying_the_record() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    subscribe_all(&app, &key).await;

    let res = create(
        &app,
        &key,
        json!({"name": " Ana Costa ", "phone": "+55 11 98765-0001", "email": "Ana@Example.COM", "country": "br",
               "language": "pt-BR", "note": "Prefers WhatsApp"}),
    )
    .await;
    assert_eq!(res.status(), 201);
    let location = res.headers().get("location").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let c: Value = res.json().await.expect("json");
    assert_eq!(location, format!("/v1/contacts/{}", c["id"]));
    let mut keys: Vec<&str> = c.as_object().expect("object").keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, RECORD_KEYS);
    assert_eq!(
        (&c["name"], &c["phone"], &c["email"], &c["country"], &c["language"], &c["note"]),
        (
            &json!("Ana Costa"),
            &json!("+5511987650001"),
            &json!("ana@example.com"),
            &json!("BR"),
            &json!("pt-BR"),
            &json!("Prefers WhatsApp")
        )
    );
    assert_eq!((&c["first_contacted_at"], &c["last_contacted_at"]), (&Value::Null, &Value::Null));

    let (status, got) = app.get_json(&format!("/v1/contacts/{}", c["id"]), &key).await;
    assert_eq!((status, &got), (200, &c));

    let res = patch(&app, &key, &c["id"], json!({"note": null, "language": "pt", "name": "Ana C. Costa"})).await;
    assert_eq!(res.status(), 200);
    let changed: Value = res.json().await.expect("json");
    assert_eq!(
        (&changed["note"], &changed["language"], &changed["name"]),
        (&Value::Null, &json!("pt"), &json!("Ana C. Costa"))
    );
    assert_eq!(changed["phone"], c["phone"], "omitted fields are kept");
    // The same values again change nothing and emit nothing.
    let same: Value = patch(&app, &key, &c["id"], json!({"language": "pt"})).await.json().await.expect("json");
    assert_eq!(same, changed);

    // Each event's data is exactly the record the API answered at that moment.
    assert_eq!(
        events(&app, ws.id).await,
        [("contact.created".to_owned(), c.clone()), ("contact.updated".to_owned(), changed.clone())]
    );
}

#[tokio::test]
async fn each_filter_finds_exactly_its_contacts_and_pages_follow_the_filter() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ana =
        created(&app, &key, json!({"name": "Ana Costa", "phone": "+14155550123", "email": "ana@example.com"})).await;
    let anabel = created(&app, &key, json!({"name": "anabel Dias", "email": "anabel@example.com"})).await;
    let joana = created(&app, &key, json!({"name": "Joana Ana", "phone": "+14155550124"})).await;
    let percent = created(&app, &key, json!({"name": "An%dre", "phone": "+14155550125"})).await;
    let id = |c: &Value| c["id"].as_i64().expect("id");

    assert_eq!(ids(&app, &key, "").await, [id(&ana), id(&anabel), id(&joana), id(&percent)]);
    // Phone: typed notations normalised like the assistant's lookup.
    assert_eq!(ids(&app, &key, "phone=%2B1%20(415)%20555-0123").await, [id(&ana)]);
    assert_eq!(ids(&app, &key, "phone=001-415-555-0124").await, [id(&joana)]);
    assert_eq!(ids(&app, &key, "phone=%2B14155550199").await, Vec::<i64>::new());
    // E-mail: exact, case-insensitive.
    assert_eq!(ids(&app, &key, "email=ANA@example.com").await, [id(&ana)]);
    // Name prefix, case-insensitive; wildcards are literal.
    assert_eq!(ids(&app, &key, "q=AN").await, [id(&ana), id(&anabel), id(&percent)]);
    assert_eq!(ids(&app, &key, "q=ana").await, [id(&ana), id(&anabel)]);
    assert_eq!(ids(&app, &key, "q=an%25").await, [id(&percent)]);
    // Label: contacts having a thread with that label (any letter case of its name).
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let m: Value = app
        .post_json("/v1/messages", &key, &json!({"channel_id": ch, "content": "Hi", "to": "+14155550124", "template": crate::helpers::test_template()}))
        .await
        .json()
        .await
        .expect("json");
    exec(
        &app,
        &format!(
            "WITH l AS (INSERT INTO labels (workspace_id, name) VALUES ($1, 'VIP') RETURNING id)
             INSERT INTO thread_labels (workspace_id, thread_id, label_id) SELECT $1, {}, id FROM l",
            m["thread_id"]
        ),
        ws.id,
    )
    .await;
    exec(&app, "INSERT INTO labels (workspace_id, name) VALUES ($1, 'unused')", ws.id).await;
    assert_eq!(ids(&app, &key, "label=vip").await, [id(&joana)]);
    assert_eq!(ids(&app, &key, "label=unused").await, Vec::<i64>::new());
    assert_eq!(ids(&app, &key, "label=VIP&q=jo").await, [id(&joana)]);
    assert_eq!(ids(&app, &key, "label=VIP&q=ana").await, Vec::<i64>::new());
    // Updated since: only what changed at or after the instant.
    exec(&app, "UPDATE contacts SET updated_at = now() - interval '1 hour' WHERE workspace_id = $1", ws.id).await;
    let since = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    patch(&app, &key, &anabel["id"], json!({"note": "called back"})).await;
    let since = since.format(&time::format_description::well_known::Rfc3339).expect("time");
    assert_eq!(ids(&app, &key, &format!("updated_since={}", since.replace('+', "%2B"))).await, [id(&anabel)]);

    // Pages: keyset on id with a cursor bound to the filters.
    let (_, first) = app.get_json("/v1/contacts?q=an&limit=2", &key).await;
    assert_eq!(first["data"].as_array().map(Vec::len), Some(2));
    let cursor = first["next_cursor"].as_str().expect("cursor").to_owned();
    let (_, second) = app.get_json(&format!("/v1/contacts?q=an&limit=2&cursor={cursor}"), &key).await;
    assert_eq!(
        second["data"].as_array().map(|d| d.iter().map(|c| c["id"].clone()).collect::<Vec<_>>()),
        Some(vec![percent["id"].clone()])
    );
    assert_eq!(second["next_cursor"], Value::Null);
    // The cursor of another filter (or of no filter) is refused, not misread.
    let res = app
        .authed(Method::GET, &format!("/v1/contacts?q=jo&limit=2&cursor={cursor}"), &key)
        .send()
        .await
        .expect("request");
    assert_eq!(error_fields(&problem(res, 422, "validation_failed").await), ["cursor"]);
    let res = app.authed(Method::GET, &format!("/v1/contacts?cursor={cursor}"), &key).send().await.expect("request");
    assert_eq!(error_fields(&problem(res, 422, "validation_failed").await), ["cursor"]);
}

#[tokio::test]
async fn bad_input_is_named_and_other_workspaces_contacts_are_not_found() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    for (query, field) in [
        ("phone=555-0101", "phone"),
        ("phone=", "phone"),
        ("email=not-an-address", "email"),
        ("label=nope", "label"),
        ("updated_since=yesterday", "updated_since"),
        ("limit=0", "limit"),
        ("cursor=junk", "cursor"),
        ("sort=name", "sort"),
    ] {
        let res = app.authed(Method::GET, &format!("/v1/contacts?{query}"), &key).send().await.expect("request");
        let p = problem(res, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), [field], "{query}");
    }
    for (body, fields) in [
        (json!({"name": "Ana"}), vec!["phone"]),
        (json!({"name": "Ana", "phone": "4155550123"}), vec!["phone"]),
        (json!({"name": "Ana", "phone": "+1415abc0123"}), vec!["phone"]),
        (json!({"name": "Ana", "email": "ana@"}), vec!["email"]),
        (json!({"name": "Ana", "email": "ana@example.com", "country": "BRA"}), vec!["country"]),
        (json!({"name": "Ana", "email": "ana@example.com", "language": "portuguese"}), vec!["language"]),
        (json!({"name": "", "email": "ana@example.com"}), vec!["name"]),
        (json!({"email": "ana@example.com"}), vec!["name"]),
        (json!({"name": "Ana", "email": "ana@example.com", "vip": true}), vec!["vip"]),
    ] {
        let p = problem(create(&app, &key, body.clone()).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), fields, "{body}");
    }
    let c = created(&app, &key, json!({"name": "Ana", "phone": "+14155550123"})).await;
    for (body, field) in [
        (json!({}), "body"),
        (json!({"phone": "12"}), "phone"),
        (json!({"phone": null}), "phone"),
        (json!({"name": null}), "name"),
        (json!({"country": "12"}), "country"),
    ] {
        let p = problem(patch(&app, &key, &c["id"], body.clone()).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), [field], "{body}");
    }
    assert_eq!(ids(&app, &key, "").await.len(), 1, "nothing was written by the refused requests");

    let other = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let other_key = app.api_key(&other).await;
    let res = app.authed(Method::GET, &format!("/v1/contacts/{}", c["id"]), &other_key).send().await.expect("request");
    problem(res, 404, "not_found").await;
    problem(patch(&app, &other_key, &c["id"], json!({"name": "Mallory"})).await, 404, "not_found").await;
    problem(delete(&app, &other_key, &c["id"]).await, 404, "not_found").await;
    assert_eq!(ids(&app, &other_key, "phone=%2B14155550123").await, Vec::<i64>::new());
    let (_, still) = app.get_json(&format!("/v1/contacts/{}", c["id"]), &key).await;
    assert_eq!(still["name"], "Ana");
    let _ = ws;
}

#[tokio::test]
async fn a_phone_or_email_in_use_is_a_conflict_naming_the_field_and_writes_nothing() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    subscribe_all(&app, &key).await;
    let ana = created(&app, &key, json!({"name": "Ana", "phone": "+14155550123", "email": "ana@example.com"})).await;
    let ben = created(&app, &key, json!({"name": "Ben", "phone": "+14155550124"})).await;
    for (body, field) in [
        (json!({"name": "Twin", "phone": "+1 415 555 0123"}), "phone"),
        (json!({"name": "Twin", "email": "ANA@example.com"}), "email"),
    ] {
        let p = problem(create(&app, &key, body.clone()).await, 409, "conflict").await;
        assert_eq!(error_fields(&p), [field], "{body}");
    }
    for (body, field) in [(json!({"phone": "+14155550123"}), "phone"), (json!({"email": "ana@example.com"}), "email")] {
        let p = problem(patch(&app, &key, &ben["id"], body.clone()).await, 409, "conflict").await;
        assert_eq!(error_fields(&p), [field], "{body}");
    }
    // A contact may keep its own values.
    assert_eq!(patch(&app, &key, &ana["id"], json!({"phone": "+14155550123"})).await.status(), 200);
    assert_eq!(ids(&app, &key, "").await.len(), 2);
    let types: Vec<String> = events(&app, ws.id).await.into_iter().map(|(t, _)| t).collect();
    assert_eq!(types, ["contact.created", "contact.created"], "refused writes emit nothing");
}

#[tokio::test]
async fn agents_may_write_contacts_but_not_erase_them_and_keys_need_the_contacts_scopes() {
    let app = TestApp::spawn().await;
    let (ws, _) = app.advanced_with_key().await;
    let (email, password) = add_member(&app, ws.id, "agent").await;
    let agent = token_for(&app, &email, &password, Some(ws.id)).await;
    let c = created(&app, &agent, json!({"name": "Ana", "phone": "+14155550123"})).await;
    assert_eq!(patch(&app, &agent, &c["id"], json!({"note": "VIP"})).await.status(), 200);

    let reader = app.api_key_with_scopes(&ws, &["contacts:read"]).await;
    assert_eq!(app.get_json(&format!("/v1/contacts/{}", c["id"]), &reader).await.0, 200);
    let p = problem(
        create(&app, &reader, json!({"name": "Ben", "phone": "+14155550124"})).await,
        403,
        "insufficient_scope",
    )
    .await;
    assert!(p["detail"].as_str().is_some_and(|d| d.contains("contacts:write")), "{p}");
    problem(delete(&app, &reader, &c["id"]).await, 403, "insufficient_scope").await;

    let writer = app.api_key_with_scopes(&ws, &["contacts:write"]).await;
    assert_eq!(ids(&app, &writer, "").await, [c["id"].as_i64().expect("id")], "write implies read");
    let other = app.api_key_with_scopes(&ws, &["messages:read"]).await;
    let res = app.authed(Method::GET, "/v1/contacts", &other).send().await.expect("request");
    problem(res, 403, "insufficient_scope").await;
    // Erasure is for admins and keys with `contacts:erase`, which `contacts:write` does not imply.
    problem(delete(&app, &agent, &c["id"]).await, 403, "forbidden").await;
    let refused = delete(&app, &writer, &c["id"]).await;
    let header = refused.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert_eq!(header, r#"Bearer realm="wms", error="insufficient_scope", scope="contacts:erase""#);
    problem(refused, 403, "insufficient_scope").await;
    assert_eq!(app.get_json(&format!("/v1/contacts/{}", c["id"]), &reader).await.0, 200, "refusals erase nothing");
    let eraser = app.api_key_with_scopes(&ws, &["contacts:erase"]).await;
    assert_eq!(delete(&app, &eraser, &c["id"]).await.status(), 204);
}
