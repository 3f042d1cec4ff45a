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

// The tests by theme, sharing the stand-in and the helpers below.
mod callback_abuse;
mod callbacks;
mod credentials;
mod inbound;
mod sending;

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
    /// What `GET /{version}/{waba_id}/message_templates` answers (default: no templates).
    templates: Arc<Mutex<Option<Reply>>>,
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
                    if req.method() == actix_web::http::Method::GET && req.path().ends_with("/message_templates") {
                        let auth = req.headers().get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("");
                        g.proofs.lock().expect("lock").push(Seen {
                            path: req.path().to_owned(),
                            authorization: auth.to_owned(),
                            body: Value::Null,
                        });
                        let (status, _, body) =
                            g.templates.lock().expect("lock").clone().unwrap_or((200, vec![], json!({"data": []})));
                        return HttpResponse::build(actix_web::http::StatusCode::from_u16(status).expect("status"))
                            .json(body);
                    }
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

    /// `GET …/message_templates` answers `status` with `body` from now on.
    pub(crate) fn templates_reply(&self, status: u16, body: Value) {
        *self.templates.lock().expect("lock") = Some((status, vec![], body));
    }

    /// The paths of the sends the stand-in received.
    pub(crate) fn seen_paths(&self) -> Vec<String> {
        self.seen().into_iter().map(|s| s.path).collect()
    }

    /// The bodies of the sends the stand-in received.
    pub(crate) fn seen_bodies(&self) -> Vec<Value> {
        self.seen().into_iter().map(|s| s.body).collect()
    }

    /// The paths of the reads (proofs and template listings) the stand-in received.
    pub(crate) fn proof_paths(&self) -> Vec<String> {
        self.proofs().into_iter().map(|s| s.path).collect()
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
    let id = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    app.approved_template(id, crate::helpers::TEST_TEMPLATE, 0).await;
    id
}

/// Sends a message; free text to an address goes out in an open service window, so the contact
/// writes first (through the inbound path, a minute ago).
pub(crate) async fn send(app: &TestApp, key: &str, body: Value) -> Value {
    if let (Some(ch), Some(to), None) = (body["channel_id"].as_i64(), body["to"].as_str(), body.get("template")) {
        let at = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
        app.contact_wrote_at(ch, to, at).await;
    }
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

async fn whatsapp_channel_with(app: &TestApp, key: &str, phone_number_id: &str, identifier: &str) -> i64 {
    let body = json!({"channel_type": "whatsapp", "display_name": "Second", "identifier": identifier, "credentials": {
        "phone_number_id": phone_number_id, "access_token": "wa-token-456", "app_secret": APP_SECRET}});
    let res = app.post_json("/v1/channels", key, &body).await;
    assert_eq!(res.status(), 201);
    res.json::<Value>().await.expect("json")["id"].as_i64().expect("id")
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
            "message.created",
            "message.status_updated",
            "message.status_updated",
            "contact.updated",
            "thread.status_changed",
            "message.created"
        ]
    );
}
