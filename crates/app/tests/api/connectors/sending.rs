//! Sending through the platforms: statuses from queued to read, rejections and failures, rate limits
//! and retries, Messenger's page token and watermarks, WhatsApp templates.

use super::*;

#[tokio::test]
async fn a_whatsapp_message_goes_queued_sent_delivered_read() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_channel(&app, &key, "pn-100").await;
    let m = send(&app, &key, json!({"channel_id": ch, "content": "Your order shipped", "to": "+14155550123"})).await;
    assert_eq!(m["status"], "queued");

    let report = dispatch(&app).await;
    assert_eq!((report.claimed, report.sent), (1, 1));
    let seen = graph.seen();
    assert_eq!(seen[0].path, "/v21.0/pn-100/messages");
    assert_eq!(seen[0].authorization, "Bearer wa-token-123");
    assert_eq!(
        seen[0].body,
        json!({"messaging_product": "whatsapp", "recipient_type": "individual", "to": "14155550123",
        "type": "text", "text": {"preview_url": false, "body": "Your order shipped"}})
    );
    assert_eq!(message(&app, &key, &m["id"]).await["status"], "sent");
    assert_eq!(daily(&app, ch).await, (1, 0, 0, 0));

    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    assert_eq!(callback(&app, "whatsapp", &wa_status("pn-100", "wamid.1", "delivered", now), None).await.status(), 200);
    assert_eq!(message(&app, &key, &m["id"]).await["status"], "delivered");
    assert_eq!(daily(&app, ch).await, (1, 1, 0, 0));
    assert_eq!(callback(&app, "whatsapp", &wa_status("pn-100", "wamid.1", "read", now + 5), None).await.status(), 200);
    assert_eq!(message(&app, &key, &m["id"]).await["status"], "read");
    // Late, repeated and out-of-order callbacks change nothing.
    for late in ["delivered", "sent", "read", "failed"] {
        callback(&app, "whatsapp", &wa_status("pn-100", "wamid.1", late, now + 1), None).await;
    }
    assert_eq!(message(&app, &key, &m["id"]).await["status"], "read");
    assert_eq!(daily(&app, ch).await, (1, 1, 1, 0));
    assert_eq!(dispatch(&app).await.claimed, 0, "sent once");
}

#[tokio::test]
async fn rejections_and_failure_callbacks_fail_the_message_with_the_reason() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_channel(&app, &key, "pn-200").await;
    graph.reply(400, vec![], json!({"error": {"message": "(#131030) Recipient phone number not in allowed list", "type": "OAuthException", "code": 131030}}));
    let refused = send(&app, &key, json!({"channel_id": ch, "content": "Hi", "to": "+14155550123"})).await;
    assert_eq!(dispatch(&app).await.failed, 1);
    assert_eq!(message(&app, &key, &refused["id"]).await["status"], "failed");

    let later = send(&app, &key, json!({"channel_id": ch, "content": "Hi again", "to": "+14155550124"})).await;
    dispatch(&app).await;
    let wamid = format!("wamid.{}", graph.seen().len());
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    callback(&app, "whatsapp", &wa_status("pn-200", &wamid, "failed", now), None).await;
    assert_eq!(message(&app, &key, &later["id"]).await["status"], "failed");
    assert_eq!(daily(&app, ch).await.3, 2);

    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct R {
        #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
        failure_reason: Option<String>,
    }
    let mut conn = app.db.conn().await.expect("conn");
    let reasons: Vec<R> = diesel::sql_query(
        "SELECT failure_reason FROM messages WHERE channel_id = $1 AND direction = 'outbound' ORDER BY id",
    )
    .bind::<diesel::sql_types::BigInt, _>(ch)
    .load(&mut conn)
    .await
    .expect("reasons");
    assert_eq!(
        reasons[0].failure_reason.as_deref(),
        Some("131030: (#131030) Recipient phone number not in allowed list")
    );
    assert_eq!(reasons[1].failure_reason.as_deref(), Some("131026: Message undeliverable"));
}

#[tokio::test]
async fn rate_limits_pause_the_channel_and_server_errors_retry_later() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_channel(&app, &key, "pn-300").await;
    let m = send(&app, &key, json!({"channel_id": ch, "content": "Hi", "to": "+14155550123"})).await;
    graph.reply(
        429,
        vec![("retry-after", "120".into())],
        json!({"error": {"message": "Too many messages", "code": 130429}}),
    );
    let r = dispatch(&app).await;
    assert_eq!((r.claimed, r.deferred), (1, 1));
    assert_eq!(message(&app, &key, &m["id"]).await["status"], "queued", "a rate limit never fails a message");
    assert_eq!(
        dispatch_state(&app, &m["id"]).await,
        (0, true),
        "the attempt does not count and the message waits for the channel"
    );
    let other = send(&app, &key, json!({"channel_id": ch, "content": "Also waits", "to": "+14155550124"})).await;
    assert_eq!(dispatch(&app).await.claimed, 0, "the channel is paused");
    assert_eq!(message(&app, &key, &other["id"]).await["status"], "queued");

    // Another channel is not affected; a 5xx there is retried later, not failed.
    let ch2 = whatsapp_channel_with(&app, &key, "pn-301", "+14155550102").await;
    let m2 = send(&app, &key, json!({"channel_id": ch2, "content": "Hi", "to": "+14155550125"})).await;
    graph.reply(503, vec![], json!({"error": {"message": "Service temporarily unavailable", "code": 2}}));
    let r = dispatch(&app).await;
    assert_eq!((r.claimed, r.deferred), (1, 1));
    assert_eq!(message(&app, &key, &m2["id"]).await["status"], "queued");
    assert_eq!(dispatch(&app).await.claimed, 0, "the retry waits for its backoff");
}

/// A message's stored dispatch attempts, and whether it waits until its channel's pause ends.
async fn dispatch_state(app: &TestApp, id: &Value) -> (i32, bool) {
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        attempts: i32,
        #[diesel(sql_type = diesel::sql_types::Bool)]
        waits: bool,
    }
    let mut conn = app.db.conn().await.expect("conn");
    let row: Row = diesel::sql_query(
        "SELECT m.dispatch_attempts AS attempts, coalesce(m.next_dispatch_at = c.send_paused_until, false) AS waits
         FROM messages m JOIN channels c ON c.workspace_id = m.workspace_id AND c.id = m.channel_id
         WHERE m.id = $1",
    )
    .bind::<diesel::sql_types::BigInt, _>(id.as_i64().expect("id"))
    .get_result(&mut conn)
    .await
    .expect("row");
    (row.attempts, row.waits)
}

#[tokio::test]
async fn messenger_sends_with_the_page_token_and_watermarks_advance_statuses() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let body = json!({"channel_type": "messenger", "display_name": "Page", "identifier": "104829301928374", "credentials": {
        "page_id": "104829301928374", "access_token": "page-token-1", "app_secret": APP_SECRET}});
    let res = app.post_json("/v1/channels", &key, &body).await;
    let ch = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    let m =
        send(&app, &key, json!({"channel_id": ch, "content": "Hello from the page", "to": "6543219876543210"})).await;
    dispatch(&app).await;
    let seen = graph.seen();
    assert_eq!(seen[0].path, "/v21.0/me/messages");
    assert_eq!(seen[0].authorization, "Bearer page-token-1");
    assert_eq!(
        seen[0].body,
        json!({"recipient": {"id": "6543219876543210"}, "messaging_type": "RESPONSE", "message": {"text": "Hello from the page"}})
    );
    assert_eq!(message(&app, &key, &m["id"]).await["status"], "sent");

    let later = (time::OffsetDateTime::now_utc().unix_timestamp() + 60) * 1000;
    let event = |kind: &str| {
        json!({"object": "page", "entry": [{"id": "104829301928374", "time": later, "messaging": [
        {"sender": {"id": "6543219876543210"}, "recipient": {"id": "104829301928374"}, "timestamp": later, kind: {"watermark": later}}]}]})
    };
    callback(&app, "messenger", &event("delivery"), None).await;
    assert_eq!(message(&app, &key, &m["id"]).await["status"], "delivered");
    callback(&app, "messenger", &event("read"), None).await;
    assert_eq!(message(&app, &key, &m["id"]).await["status"], "read");
}

#[tokio::test]
async fn templates_are_sent_as_whatsapp_templates_and_counted_as_such() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_channel(&app, &key, "pn-700").await;
    app.approved_template(ch, "order_shipped", 1).await;
    send(
        &app,
        &key,
        json!({"channel_id": ch, "content": "Order 42 shipped", "to": "+14155550123",
        "template": {"name": "order_shipped", "language": "en_US", "parameters": ["42"]}}),
    )
    .await;
    dispatch(&app).await;
    assert_eq!(
        graph.seen()[0].body["template"],
        json!({"name": "order_shipped", "language": {"code": "en_US"},
        "components": [{"type": "body", "parameters": [{"type": "text", "text": "42"}]}]})
    );
    let res = app
        .post_json(
            "/v1/messages",
            &key,
            &json!({"channel_id": ch, "content": "x", "to": "+14155550123",
        "template": {"name": "Bad Name", "language": "english!"}}),
        )
        .await;
    let p = problem(res, 422, "validation_failed").await;
    assert_eq!(crate::helpers::error_fields(&p), ["template.name", "template.language"]);
}
