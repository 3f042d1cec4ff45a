//! Erasure of a contact: exact (nothing of another contact changes, whatever their addresses),
//! audited as `contact.erased`, queued messages cancelled, `country` cleared, later deliveries
//! carrying the erased data; bad input changes nothing; the migration fills existing events.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::assistant_helpers::sql_json;
use crate::credentials::admin_token;
use crate::helpers::test_template;
use crate::webhooks_receiver::Receiver;

/// Everything stored about contact `id` of `ws` but its erasure bookkeeping: the row, its
/// messages, the events about it and its threads, as one JSON text.
async fn everything_about(app: &TestApp, ws: i64, id: i64) -> Value {
    let sql = format!(
        "SELECT json_build_object(
           'contact', (SELECT row_to_json(c) FROM contacts c WHERE c.workspace_id = $1 AND c.id = {id}),
           'messages', (SELECT json_agg(json_build_object('id', m.id, 'content', m.content, 'status', m.status,
                                                          'reason', m.failure_reason) ORDER BY m.id)
                        FROM messages m JOIN threads t ON t.id = m.thread_id
                        WHERE m.workspace_id = $1 AND t.contact_id = {id}),
           'events', (SELECT json_agg(json_build_object('id', e.id, 'payload', e.payload) ORDER BY e.id)
                      FROM webhook_events e
                      WHERE e.workspace_id = $1 AND (e.contact_id = {id}
                         OR e.thread_id IN (SELECT t.id FROM threads t WHERE t.workspace_id = $1 AND t.contact_id = {id})))
         )::text AS j"
    );
    sql_json(app, &sql, ws).await
}

async fn send_to(app: &TestApp, key: &str, ch: i64, to: &str, content: &str) -> Value {
    let body = json!({"channel_id": ch, "content": content, "to": to, "template": test_template()});
    let res = app.post_json("/v1/messages", key, &body).await;
    assert_eq!(res.status(), 201, "send to {to}");
    res.json().await.expect("json")
}

#[tokio::test]
async fn erasure_changes_nothing_of_a_contact_whose_phone_or_email_contains_the_erased_ones() {
    let app = TestApp::spawn_with(|s| s.connectors.workers = 0).await;
    let (ws, key) = app.advanced_with_key().await;
    subscribe_all(&app, &key).await;
    let ch = app.channel(&key, "whatsapp", "+14155550100", "active").await;
    // The erased person's phone is a prefix of the other's, their e-mail inside the other's.
    let erased = created(&app, &key, json!({"name": "Al", "phone": "+1415555012", "email": "a@b.co"})).await;
    let kept = created(&app, &key, json!({"name": "Alma", "phone": "+14155550123", "email": "aa@b.com"})).await;
    send_to(&app, &key, ch, "+1415555012", "for +1415555012 and a@b.co").await;
    send_to(&app, &key, ch, "+14155550123", "to +14155550123 or aa@b.com, not a@b.co").await;
    let kept_id = kept["id"].as_i64().expect("id");
    let before = everything_about(&app, ws.id, kept_id).await;
    assert_eq!(before["events"].as_array().map(Vec::len), Some(3), "contact, thread and message events: {before}");

    assert_eq!(delete(&app, &key, &erased["id"]).await.status(), 204);

    assert_eq!(everything_about(&app, ws.id, kept_id).await, before, "the other contact is untouched");
    let (status, record) = app.get_json(&format!("/v1/contacts/{kept_id}"), &key).await;
    assert_eq!((status, &record["phone"], &record["email"]), (200, &json!("+14155550123"), &json!("aa@b.com")));
    let gone = everything_about(&app, ws.id, erased["id"].as_i64().expect("id")).await;
    assert!(!gone.to_string().contains("+1415555012") && !gone.to_string().contains("a@b.co"), "{gone}");
}

#[tokio::test]
async fn erasure_cancels_queued_messages_clears_country_is_audited_and_later_deliveries_carry_the_erased_data() {
    let app = TestApp::spawn_with(|s| {
        s.connectors.workers = 0;
        crate::webhooks_delivery::loopback(s);
    })
    .await;
    let (ws, key) = app.advanced_with_key().await;
    let receiver = Receiver::start().await;
    crate::webhooks_delivery::destination(&app, &key, &receiver.url("/in"), &["contact.created", "message.created"])
        .await;
    let ch = app.channel(&key, "whatsapp", "+14155550100", "active").await;
    let person = created(
        &app,
        &key,
        json!({"name": "Zora Vexley", "phone": "+14155550166", "email": "zora@example.org", "country": "PT"}),
    )
    .await;
    let id = person["id"].as_i64().expect("id");
    let queued = send_to(&app, &key, ch, "+14155550166", "Zv-private: your parcel").await;
    let other = created(&app, &key, json!({"name": "Other One", "phone": "+14155550177"})).await;
    let other_queued = send_to(&app, &key, ch, "+14155550177", "Other hello").await;
    assert_eq!(queued["status"], "queued");

    // Only an admin or a key with `contacts:erase`: refusals change nothing.
    let writer = app.api_key_with_scopes(&ws, &["contacts:write"]).await;
    problem(delete(&app, &writer, &person["id"]).await, 403, "insufficient_scope").await;
    let eraser = app.api_key_with_scopes(&ws, &["contacts:erase"]).await;
    assert_eq!(delete(&app, &eraser, &person["id"]).await.status(), 204);

    // The queued message fails as `erased`, with its content gone; the other contact's stays.
    let row = sql_json(
        &app,
        &format!(
            "SELECT json_build_object('status', status, 'reason', failure_reason, 'content', content)::text AS j
             FROM messages WHERE workspace_id = $1 AND id = {}",
            queued["id"]
        ),
        ws.id,
    )
    .await;
    assert_eq!(row, json!({"status": "failed", "reason": "erased", "content": ""}));
    let (_, still) = app.get_json(&format!("/v1/messages/{}", other_queued["id"]), &key).await;
    assert_eq!((&still["status"], &still["content"]), (&json!("queued"), &json!("Other hello")));
    // Nobody is left to send to in the erased person's thread: refused, nothing stored.
    let again = json!({"channel_id": ch, "content": "Still there?", "thread_id": queued["thread_id"],
                       "template": test_template()});
    let p = problem(app.post_json("/v1/messages", &key, &again).await, 422, "validation_failed").await;
    assert_eq!(crate::helpers::error_fields(&p), ["thread_id"]);
    let contact = sql_json(
        &app,
        &format!("SELECT row_to_json(c)::text AS j FROM contacts c WHERE workspace_id = $1 AND id = {id}"),
        ws.id,
    )
    .await;
    for field in ["name", "phone", "email", "country", "language", "note", "platform_user_id"] {
        assert_eq!(contact[field], Value::Null, "{field}: {contact}");
    }

    // Audited once, by the key, with the count and nothing of the person.
    let admin = admin_token(&app, &ws).await;
    let (status, audit) = app.get_json("/v1/audit-events?action=contact.erased", &admin).await;
    assert_eq!(status, 200);
    let records = audit["data"].as_array().cloned().unwrap_or_default();
    assert_eq!(records.len(), 1, "{audit}");
    assert_eq!(records[0]["target"], json!({"type": "contact", "id": id}));
    assert_eq!(records[0]["details"], json!({"messages_cleared": 1}));
    assert_eq!(records[0]["actor"]["type"], "api_key");
    for needle in ["Zora", "Vexley", "4155550166", "zora@example.org", "Zv-private", "PT"] {
        assert!(!records[0].to_string().contains(needle), "{needle} in {}", records[0]);
    }

    // Deliveries sent after the erasure carry the erased data; the other contact's are whole.
    let workers = app::webhooks::start(
        &app.settings,
        app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
    );
    let got = receiver.wait_for(4, Duration::from_secs(20)).await;
    workers.stop(Duration::from_secs(5)).await;
    let bodies: Vec<Value> = got.iter().map(|r| r.json()).collect();
    assert_eq!(bodies.len(), 4, "{bodies:?}");
    let data_of = |kind: &str, pick: &dyn Fn(&Value) -> bool| -> Vec<Value> {
        bodies.iter().filter(|b| b["type"] == kind && pick(&b["data"])).map(|b| b["data"].clone()).collect()
    };
    assert_eq!(data_of("contact.created", &|d| d["id"] == id), [json!({"id": id})]);
    let mine = data_of("message.created", &|d| d["id"] == queued["id"]);
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0]["content"], "");
    assert_eq!(data_of("contact.created", &|d| d["id"] == other["id"])[0]["phone"], "+14155550177");
    assert_eq!(data_of("message.created", &|d| d["id"] == other_queued["id"])[0]["content"], "Other hello");
    for r in &got {
        for needle in ["Zora", "4155550166", "zora@example.org", "Zv-private"] {
            assert!(!String::from_utf8_lossy(&r.body).contains(needle), "{needle} delivered");
        }
    }
}

#[tokio::test]
async fn erasing_an_erased_unknown_or_foreign_contact_is_not_found_and_changes_nothing() {
    let app = TestApp::spawn_with(|s| s.connectors.workers = 0).await;
    let (ws, key) = app.advanced_with_key().await;
    let (foreign_ws, foreign_key) = app.advanced_with_key().await;
    let person = created(&app, &key, json!({"name": "Once", "phone": "+14155550188"})).await;
    let foreign =
        created(&app, &foreign_key, json!({"name": "Theirs", "phone": "+14155550188", "country": "PT"})).await;
    let foreign_before = everything_about(&app, foreign_ws.id, foreign["id"].as_i64().expect("id")).await;
    assert_eq!(delete(&app, &key, &person["id"]).await.status(), 204);

    for id in [person["id"].clone(), foreign["id"].clone(), json!(987_654)] {
        problem(delete(&app, &key, &id).await, 404, "not_found").await;
    }
    let res = app.authed(Method::DELETE, "/v1/contacts/not-a-number", &key).send().await.expect("request");
    assert_eq!(res.status().as_u16(), 404);

    let admin = admin_token(&app, &ws).await;
    let (_, audit) = app.get_json("/v1/audit-events?action=contact.erased", &admin).await;
    assert_eq!(audit["data"].as_array().map(Vec::len), Some(1), "one erasure, one record: {audit}");
    let deleted = events(&app, ws.id).await.into_iter().filter(|(t, _)| t == "contact.deleted").count();
    assert_eq!(deleted, 1);
    assert_eq!(everything_about(&app, foreign_ws.id, foreign["id"].as_i64().expect("id")).await, foreign_before);
    let (status, theirs) = app.get_json(&format!("/v1/contacts/{}", foreign["id"]), &foreign_key).await;
    assert_eq!((status, &theirs["country"]), (200, &json!("PT")));
}

#[tokio::test]
async fn the_migration_gives_events_stored_before_it_their_contact_and_thread() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let url = app.database.url.clone();
    // Back to the schema before the migration (reverting whatever came after it too).
    crate::helpers::revert_through(&url, "20261126000201").await;
    let event = |kind: &str, data: Value| {
        format!(
            "('{kind}', {}, {})",
            diesel_quote(
                &json!({"type": kind, "timestamp": "2026-11-24T08:00:00.000Z", "workspace_id": ws.id, "data": data})
                    .to_string()
            ),
            kind == "webhook.test"
        )
    };
    let rows = [
        event("contact.created", json!({"id": 41, "phone": "+14155550141"})),
        event("contact.deleted", json!({"id": 42})),
        event("thread.assigned", json!({"id": 7, "contact_id": 41})),
        event("message.created", json!({"id": 9, "thread_id": 7, "content": "hi"})),
        event("message.status_updated", json!({"id": 9, "thread_id": 7, "content": "hi"})),
        event("channel.created", json!({"id": 3})),
        event("message.created", json!({"id": 10, "thread_id": "not a number"})),
        event("webhook.test", json!({"webhook_id": 1})),
    ];
    exec(
        &app,
        &format!(
            "INSERT INTO webhook_events (workspace_id, event_type, payload, message_id, sample)
             SELECT $1, v.t, v.p, 'msg_' || md5(random()::text), v.s FROM (VALUES {}) AS v(t, p, s)",
            rows.join(", ")
        ),
        ws.id,
    )
    .await;

    adapters_postgres::migrate::run_pending(&url).await.expect("migrate again");

    let subjects = sql_json(
        &app,
        "SELECT json_agg(json_build_array(event_type, contact_id, thread_id) ORDER BY id)::text AS j
         FROM webhook_events WHERE workspace_id = $1",
        ws.id,
    )
    .await;
    assert_eq!(
        subjects,
        json!([
            ["contact.created", 41, null],
            ["contact.deleted", 42, null],
            ["thread.assigned", 41, 7],
            ["message.created", null, 7],
            ["message.status_updated", null, 7],
            ["channel.created", null, null],
            ["message.created", null, null],
            ["webhook.test", null, null],
        ])
    );
}

/// `text` as a SQL string literal.
fn diesel_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Sends `request` while contact `id` is being erased: the erasure's first step taken as it takes
/// it (the contact locked, then its data gone), the send started and waiting for the contact, then
/// the erasure committed. The send's answer.
async fn send_during_erasure(app: &TestApp, id: i64, request: reqwest::RequestBuilder) -> reqwest::Response {
    use diesel_async::scoped_futures::ScopedFutureExt;
    use diesel_async::AsyncConnection;
    let mut conn = app.db.conn().await.expect("conn");
    let handle = conn
        .transaction::<_, diesel::result::Error, _>(|c| {
            async move {
                diesel::sql_query(format!("SELECT id FROM contacts WHERE id = {id} FOR UPDATE")).execute(c).await?;
                diesel::sql_query(format!("UPDATE contacts SET name = NULL, phone = NULL, email = NULL, platform_user_id = NULL, country = NULL, language = NULL, note = NULL, erased_at = now() WHERE id = {id}"))
                    .execute(c)
                    .await?;
                let handle = tokio::spawn(request.send());
                crate::password_reset::until_waiting(app, 1).await;
                Ok(handle)
            }
            .scope_boxed()
        })
        .await
        .expect("erased");
    handle.await.expect("task").expect("request")
}

/// A send racing an erasure of its recipient never leaves its text with the erased person: the
/// erasure commits while the send is past its first reads (its thread's contact, or the contact
/// behind the address, read unerased). A send to the thread is then refused (422 naming
/// `thread_id`); a send to the address no longer finds the erased contact, whose window was the
/// only open one (422). Neither stores anything.
#[tokio::test]
async fn sends_racing_an_erasure_store_nothing_in_the_erased_persons_thread() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550100", "active").await;
    let mut people = Vec::new();
    for phone in ["+14155550166", "+14155550177"] {
        let person = created(&app, &key, json!({"name": "Zora Vexley", "phone": phone})).await;
        let first = send_to(&app, &key, ch, phone, "Zv-private: your parcel").await;
        // The person wrote in: free text to their thread and to their address is within the window.
        let mut conn = app.db.conn().await.expect("conn");
        diesel::sql_query(format!("UPDATE threads SET latest_inbound_at = now() WHERE id = {}", first["thread_id"]))
            .execute(&mut conn)
            .await
            .expect("window");
        people.push((person["id"].as_i64().expect("id"), first["thread_id"].clone()));
    }
    let to_thread = json!({"channel_id": ch, "content": "Zv-secret: thread", "thread_id": people[0].1});
    let send = app.client.post(app.url("/v1/messages")).bearer_auth(&key).json(&to_thread);
    let refused = problem(send_during_erasure(&app, people[0].0, send).await, 422, "validation_failed").await;
    assert_eq!(crate::helpers::error_fields(&refused), ["thread_id"]);
    let to_address = json!({"channel_id": ch, "content": "Zv-secret: address", "to": "+14155550177"});
    let send = app.client.post(app.url("/v1/messages")).bearer_auth(&key).json(&to_address);
    let closed = send_during_erasure(&app, people[1].0, send).await;
    assert_eq!(closed.status(), 422, "the erased person's window is not the address's any more");
    let kept = sql_json(
        &app,
        "SELECT json_build_object('n', count(*))::text AS j FROM messages
         WHERE workspace_id = $1 AND content LIKE 'Zv-secret%'",
        ws.id,
    )
    .await;
    assert_eq!(kept, json!({"n": 0}), "nothing of the racing sends is stored");
}
