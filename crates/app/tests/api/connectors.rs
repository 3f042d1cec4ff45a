//! Channel connectors against a local stand-in of Meta's Graph API: sends leave through the
//! platforms' real request shapes, and signed callbacks move statuses and bring messages in.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use hmac::{Hmac, Mac};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::Sha256;

use crate::helpers::{problem, TestApp};

/// One request the stand-in received.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    authorization: String,
    body: Value,
}

/// A scripted answer: status, headers, JSON body.
type Reply = (u16, Vec<(&'static str, String)>, Value);

/// A stand-in Graph API: records requests and answers from a script (default: success). Reads of
/// an account (`GET /{version}/{id}`, the proof of control when credentials are set) are kept
/// apart, with their own script (default: 200 with that `id`).
#[derive(Clone, Default)]
pub(crate) struct Graph {
    seen: Arc<Mutex<Vec<Seen>>>,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    proofs: Arc<Mutex<Vec<Seen>>>,
    proof_replies: Arc<Mutex<VecDeque<Reply>>>,
    pub(crate) url: String,
}

impl Graph {
    pub(crate) fn start() -> Graph {
        let mut g = Graph::default();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        g.url = format!("http://127.0.0.1:{}", listener.local_addr().expect("addr").port());
        let state = g.clone();
        let server = HttpServer::new(move || {
            App::new().app_data(web::Data::new(state.clone())).default_service(web::to(
                |req: HttpRequest, body: web::Bytes, g: web::Data<Graph>| async move {
                    if req.method() == actix_web::http::Method::GET {
                        let auth = req.headers().get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("");
                        g.proofs.lock().expect("lock").push(Seen {
                            path: req.path().to_owned(),
                            authorization: auth.to_owned(),
                            body: Value::Null,
                        });
                        let id = req.path().rsplit('/').next().unwrap_or("").to_owned();
                        let (status, body) = match g.proof_replies.lock().expect("lock").pop_front() {
                            Some((status, _, body)) => (status, body),
                            None => (200, json!({"id": id, "display_phone_number": "+1 415 555 0101"})),
                        };
                        return HttpResponse::build(actix_web::http::StatusCode::from_u16(status).expect("status"))
                            .json(body);
                    }
                    let n = {
                        let mut seen = g.seen.lock().expect("lock");
                        seen.push(Seen {
                            path: req.path().to_owned(),
                            authorization: req
                                .headers()
                                .get("authorization")
                                .and_then(|v| v.to_str().ok())
                                .unwrap_or("")
                                .to_owned(),
                            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                        });
                        seen.len()
                    };
                    let reply = g.replies.lock().expect("lock").pop_front();
                    match reply {
                        Some((status, headers, body)) => {
                            let mut r =
                                HttpResponse::build(actix_web::http::StatusCode::from_u16(status).expect("status"));
                            for (k, v) in headers {
                                r.insert_header((k, v));
                            }
                            r.json(body)
                        }
                        None if req.path().ends_with("/me/messages") => {
                            HttpResponse::Ok().json(json!({"recipient_id": "x", "message_id": format!("m_{n}")}))
                        }
                        None => HttpResponse::Ok()
                            .json(json!({"messaging_product": "whatsapp", "messages": [{"id": format!("wamid.{n}")}]})),
                    }
                },
            ))
        })
        .workers(1)
        .listen(listener)
        .expect("listen")
        .run();
        tokio::spawn(server);
        g
    }

    fn reply(&self, status: u16, headers: Vec<(&'static str, String)>, body: Value) {
        self.replies.lock().expect("lock").push_back((status, headers, body));
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("lock").clone()
    }

    /// The next proof of control answers `status` with `body`.
    fn proof_reply(&self, status: u16, body: Value) {
        self.proof_replies.lock().expect("lock").push_back((status, vec![], body));
    }

    fn proofs(&self) -> Vec<Seen> {
        self.proofs.lock().expect("lock").clone()
    }
}

const APP_SECRET: &str = "app-secret-for-tests";

pub(crate) async fn spawn(graph: &Graph) -> TestApp {
    let url = graph.url.clone();
    let app = TestApp::spawn_with(move |s| {
        s.connectors.graph_base_url = url;
        s.connectors.workers = 0;
    })
    .await;
    let mut settings = app.settings.clone();
    app::secrets::resolve_key(&mut settings, &app.db, false).await.expect("key");
    app
}

pub(crate) async fn dispatch(app: &TestApp) -> domain::connectors::DispatchReport {
    let mut settings = app.settings.clone();
    app::secrets::resolve_key(&mut settings, &app.db, false).await.expect("key");
    let gateway = app::connectors::gateway(&settings).expect("gateway");
    app::connectors::run_once(&settings, &app.db, gateway).await.expect("dispatch")
}

pub(crate) async fn whatsapp_channel(app: &TestApp, key: &str, phone_number_id: &str) -> i64 {
    let body = json!({"channel_type": "whatsapp", "display_name": "Support", "identifier": "+14155550101", "credentials": {
        "phone_number_id": phone_number_id, "access_token": "wa-token-123", "app_secret": APP_SECRET, "verify_token": "verify-me-please"}});
    let res = app.post_json("/v1/channels", key, &body).await;
    assert_eq!(res.status(), 201);
    res.json::<Value>().await.expect("json")["id"].as_i64().expect("id")
}

pub(crate) async fn send(app: &TestApp, key: &str, body: Value) -> Value {
    let res = app.post_json("/v1/messages", key, &body).await;
    assert_eq!(res.status(), 201);
    res.json().await.expect("json")
}

async fn message(app: &TestApp, key: &str, id: &Value) -> Value {
    app.get_json(&format!("/v1/messages/{id}"), key).await.1
}

fn sign(body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(APP_SECRET.as_bytes()).expect("key");
    mac.update(body);
    let hex: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

pub(crate) async fn callback(
    app: &TestApp,
    platform: &str,
    body: &Value,
    signature: Option<String>,
) -> reqwest::Response {
    let raw = serde_json::to_vec(body).expect("json");
    let mut req =
        app.client.post(app.url(&format!("/platform-webhooks/{platform}"))).header("content-type", "application/json");
    if let Some(s) = signature.or_else(|| Some(sign(&raw))).filter(|s| !s.is_empty()) {
        req = req.header("x-hub-signature-256", s);
    }
    req.body(raw).send().await.expect("request")
}

pub(crate) fn wa_status(phone_number_id: &str, wamid: &str, status: &str, ts: i64) -> Value {
    let mut s = json!({"id": wamid, "status": status, "timestamp": ts.to_string(), "recipient_id": "14155550123"});
    if status == "failed" {
        s["errors"] = json!([{"code": 131026, "title": "Message undeliverable"}]);
    }
    json!({"object": "whatsapp_business_account", "entry": [{"id": "waba-1", "changes": [{"field": "messages", "value": {
        "messaging_product": "whatsapp", "metadata": {"display_phone_number": "14155550101", "phone_number_id": phone_number_id},
        "statuses": [s]}}]}]})
}

pub(crate) fn wa_inbound(phone_number_id: &str, wamid: &str, from: &str, text: &str, ts: i64) -> Value {
    json!({"object": "whatsapp_business_account", "entry": [{"id": "waba-1", "changes": [{"field": "messages", "value": {
        "messaging_product": "whatsapp", "metadata": {"phone_number_id": phone_number_id},
        "contacts": [{"profile": {"name": "Dana Ortiz"}, "wa_id": from}],
        "messages": [{"from": from, "id": wamid, "timestamp": ts.to_string(), "type": "text", "text": {"body": text}}]}}]}]})
}

async fn daily(app: &TestApp, channel: i64) -> (i64, i64, i64, i64) {
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct S {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        sent: i64,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        delivered: i64,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        read: i64,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        failed: i64,
    }
    let mut conn = app.db.conn().await.expect("conn");
    let s: S = diesel::sql_query(
        "SELECT coalesce(sum(sent), 0)::bigint AS sent, coalesce(sum(delivered), 0)::bigint AS delivered,
                coalesce(sum(read), 0)::bigint AS read, coalesce(sum(failed), 0)::bigint AS failed
         FROM message_daily_stats WHERE channel_id = $1",
    )
    .bind::<diesel::sql_types::BigInt, _>(channel)
    .get_result(&mut conn)
    .await
    .expect("stats");
    (s.sent, s.delivered, s.read, s.failed)
}

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
    let reasons: Vec<R> = diesel::sql_query("SELECT failure_reason FROM messages WHERE channel_id = $1 ORDER BY id")
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

async fn whatsapp_channel_with(app: &TestApp, key: &str, phone_number_id: &str, identifier: &str) -> i64 {
    let body = json!({"channel_type": "whatsapp", "display_name": "Second", "identifier": identifier, "credentials": {
        "phone_number_id": phone_number_id, "access_token": "wa-token-456", "app_secret": APP_SECRET}});
    let res = app.post_json("/v1/channels", key, &body).await;
    assert_eq!(res.status(), 201);
    res.json::<Value>().await.expect("json")["id"].as_i64().expect("id")
}

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
async fn callbacks_need_a_valid_signature_and_junk_is_acknowledged() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_channel(&app, &key, "pn-500").await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let body = wa_inbound("pn-500", "wamid.evil", "14155550199", "spoofed", now);
    problem(
        callback(&app, "whatsapp", &body, Some("sha256=".to_owned() + &"0".repeat(64))).await,
        401,
        "invalid_token",
    )
    .await;
    problem(callback(&app, "whatsapp", &body, Some(String::new())).await, 401, "invalid_token").await;
    let (_, list) = app.get_json(&format!("/v1/messages?channel_id={ch}"), &key).await;
    assert_eq!(list["data"], json!([]), "nothing from a bad signature is stored");

    // Unknown accounts, other objects and broken bodies are acknowledged so Meta keeps the subscription.
    assert_eq!(
        callback(&app, "whatsapp", &wa_inbound("pn-unknown", "w", "14155550199", "x", now), None).await.status(),
        200
    );
    assert_eq!(callback(&app, "whatsapp", &json!({"object": "page", "entry": []}), None).await.status(), 200);
    let res = app
        .client
        .post(app.url("/platform-webhooks/whatsapp"))
        .header("x-hub-signature-256", sign(b"{not json"))
        .body("{not json")
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    problem(
        app.client
            .post(app.url("/platform-webhooks/sms"))
            .header("x-hub-signature-256", "sha256=00")
            .body("{}")
            .send()
            .await
            .expect("request"),
        404,
        "not_found",
    )
    .await;
}

#[tokio::test]
async fn the_subscription_handshake_echoes_the_challenge_for_a_known_token() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    whatsapp_channel(&app, &key, "pn-600").await;
    let res = app
        .get(
            "/platform-webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=verify-me-please&hub.challenge=1158201444",
        )
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.text().await.expect("body"), "1158201444");
    problem(
        app.get("/platform-webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=wrong-token&hub.challenge=1").await,
        403,
        "forbidden",
    )
    .await;
    problem(
        app.get("/platform-webhooks/messenger?hub.mode=subscribe&hub.verify_token=verify-me-please&hub.challenge=1")
            .await,
        403,
        "forbidden",
    )
    .await;
    problem(app.get("/platform-webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=verify-me-please&hub.challenge=%3Cscript%3E").await, 422, "validation_failed").await;
    problem(app.get("/platform-webhooks/whatsapp").await, 403, "forbidden").await;
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

#[tokio::test]
async fn credentials_are_encrypted_validated_and_never_returned() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_channel(&app, &key, "pn-800").await;
    let (_, record) = app.get_json(&format!("/v1/channels/{ch}"), &key).await;
    let text = record.to_string();
    assert!(!text.contains("wa-token-123") && !text.contains(APP_SECRET) && !text.contains("credentials"), "{text}");

    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct C {
        #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Bytea>)]
        credentials_encrypted: Option<Vec<u8>>,
    }
    let mut conn = app.db.conn().await.expect("conn");
    let c: C = diesel::sql_query("SELECT credentials_encrypted FROM channels WHERE id = $1")
        .bind::<diesel::sql_types::BigInt, _>(ch)
        .get_result(&mut conn)
        .await
        .expect("row");
    let stored_bytes = c.credentials_encrypted.expect("stored");
    let stored = String::from_utf8_lossy(&stored_bytes);
    assert!(!stored.contains("wa-token-123") && !stored.contains(APP_SECRET));

    // Updating credentials through PATCH; bad ones are named field by field.
    let res = app
        .authed(Method::PATCH, &format!("/v1/channels/{ch}"), &key)
        .json(&json!({"credentials": {"page_id": "1", "access_token": "short"}}))
        .send()
        .await
        .expect("request");
    let p = problem(res, 422, "validation_failed").await;
    assert_eq!(
        crate::helpers::error_fields(&p),
        ["credentials.phone_number_id", "credentials.page_id", "credentials.access_token"]
    );
    let res = app.authed(Method::PATCH, &format!("/v1/channels/{ch}"), &key)
        .json(&json!({"display_name": "Renamed", "credentials": {"phone_number_id": "pn-801", "access_token": "wa-token-789"}}))
        .send().await.expect("request");
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.expect("json")["display_name"], "Renamed");
    // The same platform account cannot be connected twice.
    let other = app
        .post_json(
            "/v1/channels",
            &key,
            &json!({"channel_type": "whatsapp", "display_name": "Dup", "identifier": "+14155550109",
        "credentials": {"phone_number_id": "pn-801", "access_token": "wa-token-000"}}),
        )
        .await;
    problem(other, 409, "conflict").await;
    let res = app
        .authed(Method::PATCH, "/v1/channels/999999", &key)
        .json(&json!({"display_name": "x"}))
        .send()
        .await
        .expect("request");
    problem(res, 404, "not_found").await;
}

#[tokio::test]
async fn every_change_emits_its_webhook_event() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let hook = app.post_json("/v1/webhooks", &key, &json!({"url": "https://hooks.example.com/wms", "platform": "custom",
        "events": ["message.created", "message.status_updated", "thread.created", "thread.status_changed", "contact.created",
                   "contact.updated", "channel.created", "channel.updated"]})).await;
    assert_eq!(hook.status(), 201, "{:?}", hook.text().await);
    let ch = whatsapp_channel(&app, &key, "pn-900").await;
    app.authed(Method::PATCH, &format!("/v1/channels/{ch}"), &key)
        .json(&json!({"display_name": "Renamed"}))
        .send()
        .await
        .expect("request");
    let m = send(&app, &key, json!({"channel_id": ch, "content": "Hi", "to": "+14155550123"})).await;
    dispatch(&app).await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    callback(&app, "whatsapp", &wa_status("pn-900", "wamid.1", "delivered", now), None).await;
    // The contact resolves the thread, then writes again: the thread reopens.
    use diesel_async::RunQueryDsl;
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query("UPDATE threads SET status = 'resolved' WHERE id = $1")
        .bind::<diesel::sql_types::BigInt, _>(m["thread_id"].as_i64().expect("thread"))
        .execute(&mut conn)
        .await
        .expect("resolve");
    callback(&app, "whatsapp", &wa_inbound("pn-900", "wamid.in", "14155550123", "Thanks", now + 1), None).await;

    #[derive(diesel::QueryableByName)]
    struct E {
        #[diesel(sql_type = diesel::sql_types::Text)]
        event_type: String,
    }
    let events: Vec<E> =
        diesel::sql_query("SELECT event_type FROM webhook_events ORDER BY id").load(&mut conn).await.expect("events");
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(
        types,
        [
            "channel.created",
            "channel.updated",
            "contact.created",
            "thread.created",
            "message.created",
            "message.status_updated",
            "message.status_updated",
            "contact.updated",
            "thread.status_changed",
            "message.created"
        ]
    );
}

/// A body signed with `secret`, and its signature header.
fn sign_with(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("key");
    mac.update(body);
    format!("sha256={}", mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect::<String>())
}

async fn raw_callback(
    base: &str,
    app: &TestApp,
    platform: &str,
    body: Vec<u8>,
    signature: Option<&str>,
) -> reqwest::Response {
    let mut req =
        app.client.post(format!("{base}/platform-webhooks/{platform}")).header("content-type", "application/json");
    if let Some(s) = signature {
        req = req.header("x-hub-signature-256", s);
    }
    req.body(body).send().await.expect("request")
}

/// Bodies naming the known account, an unknown one, none, and not JSON at all.
fn bodies(now: i64) -> Vec<(&'static str, Vec<u8>)> {
    let many: Vec<Value> =
        (0..20).map(|i| wa_inbound(&format!("pn-x{i}"), "w", "14155550199", "x", now)["entry"][0].clone()).collect();
    let mut with_known = many.clone();
    with_known.push(wa_inbound("pn-700", "wamid.evil", "14155550199", "spoofed", now)["entry"][0].clone());
    vec![
        (
            "known",
            serde_json::to_vec(&wa_inbound("pn-700", "wamid.evil", "14155550199", "spoofed", now)).expect("json"),
        ),
        ("unknown", serde_json::to_vec(&wa_inbound("pn-nobody", "w", "14155550199", "x", now)).expect("json")),
        ("none", br#"{"object":"whatsapp_business_account","entry":[]}"#.to_vec()),
        ("other object", br#"{"object":"page","entry":[]}"#.to_vec()),
        ("not json", b"{not json".to_vec()),
        (
            "many with known",
            serde_json::to_vec(&json!({"object": "whatsapp_business_account", "entry": with_known})).expect("json"),
        ),
    ]
}

#[tokio::test]
async fn a_bad_signature_is_one_answer_whatever_the_body_names() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_channel(&app, &key, "pn-700").await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let mut details = std::collections::HashSet::new();
    for (name, body) in bodies(now) {
        let forged = sign_with("not-the-app-secret", &body);
        for signature in [None, Some("sha256=zz"), Some(""), Some("sha1=00"), Some(forged.as_str())] {
            let res = raw_callback(&app.address, &app, "whatsapp", body.clone(), signature).await;
            let p = problem(res, 401, "invalid_token").await;
            details.insert(p["detail"].as_str().unwrap_or_default().to_owned());
            assert!(!p.to_string().contains("pn-"), "{name}: the answer names an account: {p}");
        }
    }
    assert_eq!(details.len(), 1, "one answer for every bad signature: {details:?}");
    let (_, list) = app.get_json(&format!("/v1/messages?channel_id={ch}"), &key).await;
    assert_eq!(list["data"], json!([]), "nothing from a bad signature is stored");
    // The same bodies, validly signed, are accepted.
    for (name, body) in bodies(now) {
        let signature = sign_with(APP_SECRET, &body);
        let res = raw_callback(&app.address, &app, "whatsapp", body, Some(&signature)).await;
        assert_eq!(res.status(), 200, "{name}");
    }
}

#[tokio::test]
async fn a_signed_body_naming_more_than_a_hundred_accounts_is_too_large_and_changes_nothing() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_channel(&app, &key, "pn-700").await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let entries = |n: usize| -> Vec<u8> {
        let mut entry: Vec<Value> =
            vec![wa_inbound("pn-700", "wamid.in", "14155550199", "hello", now)["entry"][0].clone()];
        // Repeats of one account count once.
        entry.push(entry[0].clone());
        entry.extend((1..n).map(|i| wa_inbound(&format!("pn-x{i}"), "w", "14155550199", "x", now)["entry"][0].clone()));
        serde_json::to_vec(&json!({"object": "whatsapp_business_account", "entry": entry})).expect("json")
    };
    let too_many = entries(101);
    let signature = sign_with(APP_SECRET, &too_many);
    let p = problem(
        raw_callback(&app.address, &app, "whatsapp", too_many, Some(&signature)).await,
        413,
        "payload_too_large",
    )
    .await;
    assert!(p["detail"].as_str().unwrap_or_default().contains("101"), "{p}");
    let (_, list) = app.get_json(&format!("/v1/messages?channel_id={ch}"), &key).await;
    assert_eq!(list["data"], json!([]), "nothing from a refused body is stored");

    let hundred = entries(100);
    let signature = sign_with(APP_SECRET, &hundred);
    assert_eq!(raw_callback(&app.address, &app, "whatsapp", hundred, Some(&signature)).await.status(), 200);
    let (_, list) = app.get_json(&format!("/v1/messages?channel_id={ch}"), &key).await;
    assert_eq!(list["data"].as_array().map(Vec::len), Some(1), "{list}");
}

#[tokio::test]
async fn an_unsigned_mebibyte_naming_twenty_thousand_accounts_costs_no_query_per_account() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let page = "104829301928374";
    let body = json!({"channel_type": "messenger", "display_name": "Page", "identifier": page, "credentials": {
        "page_id": page, "access_token": "page-token-1", "app_secret": APP_SECRET}});
    assert_eq!(app.post_json("/v1/channels", &key, &body).await.status(), 201);
    let counter = crate::statements::StatementCounter::start(&app.database.url).await;
    let base = app.spawn_instance_at(&counter.url);

    // 20,000 pages, the connected one among them, padded to just under the 1 MiB limit.
    let mut entry: Vec<Value> =
        (0..20_000).map(|i| json!({"id": format!("{:015}", 200_000_000_000_000u64 + i), "messaging": []})).collect();
    entry[10_000] = json!({"id": page, "messaging": []});
    let mut flood = serde_json::to_vec(&json!({"object": "page", "entry": entry, "pad": ""})).expect("json");
    let pad = 1024 * 1024 - 16 - flood.len();
    flood = serde_json::to_vec(&json!({"object": "page", "entry": entry, "pad": "p".repeat(pad)})).expect("json");
    assert!(flood.len() > 1000 * 1024 && flood.len() <= 1024 * 1024, "{}", flood.len());

    let before = counter.statements();
    let forged = sign_with("forged", &flood);
    let res = raw_callback(&base, &app, "messenger", flood.clone(), Some(&forged)).await;
    problem(res, 401, "invalid_token").await;
    let res = raw_callback(&base, &app, "messenger", flood, None).await;
    problem(res, 401, "invalid_token").await;
    let spent = counter.statements() - before;
    // The platform's secrets once and the first accounts named once: a handful, not 20,000.
    assert!(spent <= 10, "{spent} statements for two unsigned callbacks");

    // The counter does see the server's queries: a signed callback for the page is applied.
    let before = counter.statements();
    let inbound = serde_json::to_vec(&json!({"object": "page", "entry": [{"id": page, "time": 1, "messaging": [
        {"sender": {"id": "psid1"}, "recipient": {"id": page}, "timestamp": 1_700_000_000_000i64, "message": {"mid": "m1", "text": "yo"}}]}]}))
    .expect("json");
    let signature = sign_with(APP_SECRET, &inbound);
    assert_eq!(raw_callback(&base, &app, "messenger", inbound, Some(&signature)).await.status(), 200);
    assert!(counter.statements() > before, "the counter missed the applied callback");
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
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    // 24 callbacks of a new sender and 24 sends to them, all at once.
    let inbound = (0..24).map(|i| {
        let body = wa_inbound("pn-700", &format!("wamid.c{i}"), "5511987650077", &format!("msg {i}"), now);
        let app = &app;
        async move { callback(app, "whatsapp", &body, None).await.status().as_u16() }
    });
    let outbound = (0..24).map(|i| {
        let req = app
            .authed(Method::POST, "/v1/messages", &key)
            .json(&json!({"channel_id": ch, "content": format!("out {i}"), "to": "+5511987650077"}));
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

/// Each channel's sealed credentials are bound to its row and workspace: copied onto another
/// channel (of the same or another workspace) in SQL, they do not open there, so the copy neither
/// sends nor vouches for callbacks; the original keeps working.
#[tokio::test]
async fn sealed_credentials_moved_to_another_row_or_workspace_are_refused() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let (_, other_key) = app.advanced_with_key().await;
    let original = whatsapp_channel(&app, &key, "pn-910").await;
    let same_ws = whatsapp_channel_with(&app, &key, "pn-911", "+14155550111").await;
    let other_ws = whatsapp_channel_with(&app, &other_key, "pn-912", "+14155550112").await;
    crate::credentials::sql(
        &app,
        &format!(
            "UPDATE channels SET credentials_encrypted = (SELECT credentials_encrypted FROM channels WHERE id = {original}) \
             WHERE id IN ({same_ws}, {other_ws})"
        ),
    )
    .await;
    let to = "+14155550123";
    let a = send(&app, &key, json!({"channel_id": same_ws, "content": "moved", "to": to})).await;
    let b = send(&app, &other_key, json!({"channel_id": other_ws, "content": "moved", "to": to})).await;
    let c = send(&app, &key, json!({"channel_id": original, "content": "mine", "to": to})).await;
    let report = dispatch(&app).await;
    assert_eq!((report.claimed, report.sent, report.failed), (3, 1, 2), "{report:?}");
    for (k, m, ch) in [(&key, &a, same_ws), (&other_key, &b, other_ws)] {
        assert_eq!(message(&app, k, &m["id"]).await["status"], "failed");
        let reason = format!(
            "(SELECT failure_reason FROM messages WHERE channel_id = {ch}) = \
             'the channel''s credentials cannot be read; set them again'"
        );
        assert!(crate::credentials::sql_bool(&app, &reason).await, "failure reason of channel {ch}");
    }
    assert_eq!(message(&app, &key, &c["id"]).await["status"], "sent");
    let seen = graph.seen();
    assert_eq!(seen.len(), 1, "only the original's credentials reach the platform: {seen:?}");
    assert_eq!(seen[0].path, "/v21.0/pn-910/messages");
    // A callback for the copy's account, signed with the app secret it now holds, applies nothing.
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let res = callback(&app, "whatsapp", &wa_inbound("pn-911", "wamid.moved", "14155550999", "hi", now), None).await;
    assert!(res.status() == 200 || res.status() == 401, "{}", res.status());
    assert!(
        !crate::credentials::sql_bool(
            &app,
            "EXISTS (SELECT 1 FROM messages WHERE platform_message_id = 'wamid.moved')"
        )
        .await,
        "the moved credentials vouched for a callback"
    );
}

fn wa_body(phone_number_id: &str, identifier: &str, token: &str) -> Value {
    json!({"channel_type": "whatsapp", "display_name": "Proof", "identifier": identifier,
        "credentials": {"phone_number_id": phone_number_id, "access_token": token, "app_secret": APP_SECRET}})
}

async fn nothing_stored_for(app: &TestApp, account: &str, identifier: &str) -> bool {
    !crate::credentials::sql_bool(
        app,
        &format!(
            "EXISTS (SELECT 1 FROM channels WHERE platform_account_id = '{account}' OR identifier = '{identifier}')"
        ),
    )
    .await
}

/// decisions.md, "Abuse limits": credentials bind a channel to its platform account only after
/// `GET {graph}/{version}/{id}` with the token answers 200 with that id; a refused token or another
/// id is 422 naming `credentials`, a failing platform 502, and nothing is stored either way.
#[tokio::test]
async fn credentials_bind_only_once_the_platform_confirms_the_account() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_channel(&app, &key, "pn-950").await;
    let proofs = graph.proofs();
    assert_eq!(proofs.len(), 1);
    assert_eq!((proofs[0].path.as_str(), proofs[0].authorization.as_str()), ("/v21.0/pn-950", "Bearer wa-token-123"));
    let page = json!({"channel_type": "messenger", "display_name": "Page", "identifier": "104829301928374",
        "credentials": {"page_id": "104829301928374", "access_token": "page-token-123"}});
    assert_eq!(app.post_json("/v1/channels", &key, &page).await.status(), 201);
    assert_eq!(graph.proofs()[1].path, "/v21.0/104829301928374");

    let refusals = [
        (401, json!({"error": {"message": "Invalid OAuth access token.", "type": "OAuthException", "code": 190}})),
        (400, json!({"error": {"message": "Unsupported get request.", "type": "GraphMethodException", "code": 100}})),
        (200, json!({"id": "pn-someone-else"})),
        (200, json!({"name": "no id"})),
    ];
    for (status, answer) in refusals {
        graph.proof_reply(status, answer.clone());
        let res = app.post_json("/v1/channels", &key, &wa_body("pn-951", "+14155550151", "wa-token-951")).await;
        let p = problem(res, 422, "validation_failed").await;
        assert_eq!(crate::helpers::error_fields(&p), ["credentials"], "{answer}: {p}");
        assert!(!p.to_string().contains("wa-token-951"), "the token is never echoed: {p}");
        assert!(nothing_stored_for(&app, "pn-951", "+14155550151").await, "{answer}");
    }
    graph.proof_reply(503, json!({"error": {"message": "Service temporarily unavailable", "code": 2}}));
    let res = app.post_json("/v1/channels", &key, &wa_body("pn-951", "+14155550151", "wa-token-951")).await;
    problem(res, 502, "service_unavailable").await;
    assert!(nothing_stored_for(&app, "pn-951", "+14155550151").await);

    // New credentials through PATCH: refused ones change nothing, confirmed ones bind.
    let patch = |account: &str| json!({"display_name": "Renamed", "credentials": {"phone_number_id": account, "access_token": "wa-token-952"}});
    graph.proof_reply(401, json!({"error": {"message": "Invalid OAuth access token.", "code": 190}}));
    let res = app
        .authed(Method::PATCH, &format!("/v1/channels/{ch}"), &key)
        .json(&patch("pn-952"))
        .send()
        .await
        .expect("req");
    assert_eq!(crate::helpers::error_fields(&problem(res, 422, "validation_failed").await), ["credentials"]);
    let unchanged =
        format!("(SELECT platform_account_id = 'pn-950' AND display_name = 'Support' FROM channels WHERE id = {ch})");
    assert!(crate::credentials::sql_bool(&app, &unchanged).await, "a refused PATCH changed the channel");
    let res = app
        .authed(Method::PATCH, &format!("/v1/channels/{ch}"), &key)
        .json(&patch("pn-953"))
        .send()
        .await
        .expect("req");
    assert_eq!(res.status(), 200);
    assert_eq!(graph.proofs().last().map(|p| p.path.clone()).as_deref(), Some("/v21.0/pn-953"));
    let bound = format!("(SELECT platform_account_id = 'pn-953' FROM channels WHERE id = {ch})");
    assert!(crate::credentials::sql_bool(&app, &bound).await);
}

#[tokio::test]
async fn an_unreachable_platform_is_502_and_nothing_is_stored() {
    let closed =
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("port");
    let app = TestApp::spawn_with(move |s| {
        s.connectors.graph_base_url = format!("http://127.0.0.1:{closed}");
        s.connectors.workers = 0;
    })
    .await;
    let (_, key) = app.advanced_with_key().await;
    let started = std::time::Instant::now();
    let res = app.post_json("/v1/channels", &key, &wa_body("pn-960", "+14155550160", "wa-token-960")).await;
    problem(res, 502, "service_unavailable").await;
    assert!(nothing_stored_for(&app, "pn-960", "+14155550160").await);
    let ch = app.channel(&key, "whatsapp", "+14155550161", "active").await;
    let res = app
        .authed(Method::PATCH, &format!("/v1/channels/{ch}"), &key)
        .json(&json!({"credentials": {"phone_number_id": "pn-961", "access_token": "wa-token-961"}}))
        .send()
        .await
        .expect("request");
    problem(res, 502, "service_unavailable").await;
    assert!(
        crate::credentials::sql_bool(
            &app,
            &format!("(SELECT credentials_encrypted IS NULL FROM channels WHERE id = {ch})")
        )
        .await
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "bounded: {:?}", started.elapsed());
}
