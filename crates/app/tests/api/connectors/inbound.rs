//! Inbound messages: the contact and thread they make, once, even when they arrive together.

use super::*;

#[tokio::test]
async fn inbound_messages_create_the_contact_and_thread_once() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_channel(&app, &key, "pn-400").await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let first = wa_inbound("pn-400", "wamid.in1", "5511987650001", "Olá, meu pedido?", now);
    assert_eq!(callback(&app, "whatsapp", &first, None).await.status(), 200);
    assert_eq!(callback(&app, "whatsapp", &first, None).await.status(), 200, "redelivery");
    callback(&app, "whatsapp", &wa_inbound("pn-400", "wamid.in2", "5511987650001", "Alô?", now + 60), None).await;

    let (_, list) = app.get_json(&format!("/v1/messages?channel_id={ch}&direction=inbound"), &key).await;
    let data = list["data"].as_array().expect("data");
    assert_eq!(data.len(), 2, "the redelivered callback is stored once");
    assert_eq!(data[1]["content"], "Olá, meu pedido?");
    assert_eq!(data[0]["thread_id"], data[1]["thread_id"]);

    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct T {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        unread_count: i32,
        #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
        name: Option<String>,
        #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
        phone: Option<String>,
    }
    let mut conn = app.db.conn().await.expect("conn");
    let t: T = diesel::sql_query(
        "SELECT t.unread_count, c.name, c.phone FROM threads t JOIN contacts c ON c.id = t.contact_id WHERE t.id = $1",
    )
    .bind::<diesel::sql_types::BigInt, _>(data[0]["thread_id"].as_i64().expect("thread"))
    .get_result(&mut conn)
    .await
    .expect("thread");
    assert_eq!(
        (t.unread_count, t.name.as_deref(), t.phone.as_deref()),
        (2, Some("Dana Ortiz"), Some("+5511987650001"))
    );

    // A reply to that thread goes to the contact's number.
    send(&app, &key, json!({"channel_id": ch, "content": "Chega amanhã!", "thread_id": data[0]["thread_id"]})).await;
    dispatch(&app).await;
    assert_eq!(graph.seen().last().map(|s| s.body["to"].clone()), Some(json!("5511987650001")));
}

#[tokio::test]
async fn concurrent_first_messages_from_one_sender_make_one_contact_and_thread() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (ws, key) = app.advanced_with_key().await;
    let hook = app
        .post_json(
            "/v1/webhooks",
            &key,
            &json!({"url": "https://hooks.example.com/wms",
            "events": ["message.created", "thread.created", "contact.created"]}),
        )
        .await;
    assert_eq!(hook.status(), 201);
    let ch = whatsapp_channel(&app, &key, "pn-700").await;
    app.approved_template(ch, crate::helpers::TEST_TEMPLATE, 0).await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    // 24 callbacks of a new sender and 24 sends to them, all at once (templates: a send may come
    // before the contact's first message, when the service window is still closed).
    let inbound = (0..24).map(|i| {
        let body = wa_inbound("pn-700", &format!("wamid.c{i}"), "5511987650077", &format!("msg {i}"), now);
        let app = &app;
        async move { callback(app, "whatsapp", &body, None).await.status().as_u16() }
    });
    let outbound = (0..24).map(|i| {
        let req = app
            .authed(Method::POST, "/v1/messages", &key)
            .json(&json!({"channel_id": ch, "content": format!("out {i}"), "to": "+5511987650077",
                          "template": crate::helpers::test_template()}));
        async move { req.send().await.expect("request").status().as_u16() }
    });
    let (ins, outs) =
        futures_util::future::join(futures_util::future::join_all(inbound), futures_util::future::join_all(outbound))
            .await;
    assert!(ins.iter().all(|s| *s == 200), "callbacks: {ins:?}");
    assert!(outs.iter().all(|s| *s == 201), "sends: {outs:?}");

    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Totals {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        contacts: i64,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        threads: i64,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        unread: i64,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        messages: i64,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        contact_events: i64,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        thread_events: i64,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        message_events: i64,
    }
    let mut conn = app.db.conn().await.expect("conn");
    let t: Totals = diesel::sql_query(
        "SELECT (SELECT count(*) FROM contacts WHERE workspace_id = $1) AS contacts,
                (SELECT count(*) FROM threads WHERE workspace_id = $1) AS threads,
                (SELECT coalesce(sum(unread_count), 0)::bigint FROM threads WHERE workspace_id = $1) AS unread,
                (SELECT count(*) FROM messages WHERE workspace_id = $1) AS messages,
                (SELECT count(*) FROM webhook_events WHERE workspace_id = $1 AND event_type = 'contact.created') AS contact_events,
                (SELECT count(*) FROM webhook_events WHERE workspace_id = $1 AND event_type = 'thread.created') AS thread_events,
                (SELECT count(*) FROM webhook_events WHERE workspace_id = $1 AND event_type = 'message.created') AS message_events",
    )
    .bind::<diesel::sql_types::BigInt, _>(ws.id)
    .get_result(&mut conn)
    .await
    .expect("totals");
    assert_eq!(
        (t.contacts, t.threads, t.unread, t.messages, t.contact_events, t.thread_events, t.message_events),
        (1, 1, 24, 48, 1, 1, 48)
    );
}

#[tokio::test]
async fn inbound_contacts_carry_the_rest_record_and_an_erased_number_comes_back_as_a_new_contact() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (ws, key) = app.advanced_with_key().await;
    let hook = json!({"url": "https://hooks.example.com/c", "platform": "custom",
                      "events": ["contact.created", "contact.updated"]});
    assert_eq!(app.post_json("/v1/webhooks", &key, &hook).await.status(), 201);
    whatsapp_channel(&app, &key, "pn-900").await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let first = wa_inbound("pn-900", "wamid.e1", "5511987650009", "Oi", now);
    assert_eq!(callback(&app, "whatsapp", &first, None).await.status(), 200);
    let (_, list) = app.get_json("/v1/contacts?phone=%2B5511987650009", &key).await;
    let contact = list["data"][0].clone();
    assert_eq!(contact["name"], "Dana Ortiz");

    // The event's data is the REST record.
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct P {
        #[diesel(sql_type = diesel::sql_types::Text)]
        payload: String,
    }
    let mut conn = app.db.conn().await.expect("conn");
    let p: P = diesel::sql_query(
        "SELECT payload FROM webhook_events WHERE workspace_id = $1 AND event_type = 'contact.created'",
    )
    .bind::<diesel::sql_types::BigInt, _>(ws.id)
    .get_result(&mut conn)
    .await
    .expect("event");
    assert_eq!(serde_json::from_str::<Value>(&p.payload).expect("json")["data"], contact);

    let res =
        app.authed(Method::DELETE, &format!("/v1/contacts/{}", contact["id"]), &key).send().await.expect("delete");
    assert_eq!(res.status(), 204);
    let again = wa_inbound("pn-900", "wamid.e2", "5511987650009", "Oi de novo", now + 60);
    assert_eq!(callback(&app, "whatsapp", &again, None).await.status(), 200);
    let (_, list) = app.get_json("/v1/contacts?phone=%2B5511987650009", &key).await;
    let data = list["data"].as_array().expect("data");
    assert_eq!(data.len(), 1, "{list}");
    assert_ne!(data[0]["id"], contact["id"], "the same number after erasure is a new contact");
    assert_eq!(data[0]["name"], "Dana Ortiz");
}

// PostgreSQL stores no NUL character: one in a message used to fail the whole callback (500, every
// retry the same), losing every message of its body and leaving the service window closed.
#[tokio::test]
async fn a_message_with_the_nul_character_is_stored_with_the_rest_of_its_callback() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_channel(&app, &key, "pn-nul").await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let mut body = wa_inbound("pn-nul", "wamid.nul1", "5511987650009", "hi", now);
    let second = json!({"from": "5511987650009", "id": "wamid.nul2", "timestamp": (now + 1).to_string(), "type": "text",
        "text": {"body": "a\u{0}b"}});
    body["entry"][0]["changes"][0]["value"]["messages"].as_array_mut().expect("messages").push(second);
    body["entry"][0]["changes"][0]["value"]["contacts"][0]["profile"]["name"] = json!("Dana\u{0}");
    assert_eq!(callback(&app, "whatsapp", &body, None).await.status(), 200);

    let (_, list) = app.get_json(&format!("/v1/messages?channel_id={ch}&direction=inbound"), &key).await;
    let contents: Vec<&str> =
        list["data"].as_array().expect("data").iter().filter_map(|m| m["content"].as_str()).collect();
    assert_eq!(contents, ["a\u{FFFD}b", "hi"]);
    let thread = list["data"][0]["thread_id"].as_i64().expect("thread");
    let (_, t) = app.get_json(&format!("/v1/threads/{thread}"), &key).await;
    assert_eq!(t["service_window"]["open"], true, "{t}");
}
