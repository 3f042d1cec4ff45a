//! `POST /secret-scanning/github`: GitHub's secret-scanning partner alerts, signed with a test key
//! pair whose public half a local stand-in publishes as GitHub's keys document.

use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use actix_web::{web, App, HttpResponse, HttpServer};
use base64::Engine;
use domain::workspace::PlanTier;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::{EncodePublicKey, LineEnding};
use serde_json::{json, Value};

use crate::credentials::{admin_token, channels, create_key, sql_bool};
use crate::helpers::{error_fields, problem, TestApp, TestWorkspace};
use crate::pages::sign_in;

/// GitHub's keys document on a loopback port, counting how often it is fetched.
struct KeysStandIn {
    url: String,
    fetches: Arc<AtomicUsize>,
    current: SigningKey,
    old: SigningKey,
    document: Arc<std::sync::Mutex<Value>>,
}

fn pem(k: &SigningKey) -> String {
    k.verifying_key().to_public_key_pem(LineEnding::LF).expect("pem")
}

impl KeysStandIn {
    fn start() -> Self {
        let current = SigningKey::random(&mut rand::rngs::OsRng);
        let old = SigningKey::random(&mut rand::rngs::OsRng);
        let document = Arc::new(std::sync::Mutex::new(json!({"public_keys": [
            {"key_identifier": "current-id", "key": pem(&current), "is_current": true},
            {"key_identifier": "old-id", "key": pem(&old), "is_current": false},
        ]})));
        let served = document.clone();
        let fetches = Arc::new(AtomicUsize::new(0));
        let counter = fetches.clone();
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let server = HttpServer::new(move || {
            let (document, counter) = (served.clone(), counter.clone());
            App::new().route(
                "/meta/public_keys/secret_scanning",
                web::get().to(move || {
                    counter.fetch_add(1, Ordering::SeqCst);
                    let document = document.lock().expect("document").clone();
                    async move { HttpResponse::Ok().json(document) }
                }),
            )
        })
        .workers(1)
        .listen(listener)
        .expect("listen")
        .run();
        tokio::spawn(server);
        let url = format!("http://127.0.0.1:{port}/meta/public_keys/secret_scanning");
        Self { url, fetches, current, old, document }
    }

    /// Lists one more key, as GitHub does when it starts signing with a new one.
    fn publish(&self, identifier: &str, key: &SigningKey) {
        let mut document = self.document.lock().expect("document");
        if let Some(keys) = document["public_keys"].as_array_mut() {
            keys.push(json!({"key_identifier": identifier, "key": pem(key), "is_current": false}));
        }
    }
}

/// The app and the stand-in it verifies against.
async fn spawn() -> (TestApp, KeysStandIn) {
    let stand_in = KeysStandIn::start();
    let url = stand_in.url.clone();
    let app = TestApp::spawn_with(|s| s.secret_scanning.github_keys_url = url).await;
    (app, stand_in)
}

/// The same, sending its e-mail to a real SMTP server, with the mail workers running.
async fn spawn_with_mail() -> (TestApp, KeysStandIn, crate::mail_sink::SmtpSink, app::mail::MailWorkers) {
    let sink = crate::mail_sink::SmtpSink::start().await;
    let stand_in = KeysStandIn::start();
    let url = stand_in.url.clone();
    let app = TestApp::spawn_with(|s| {
        s.secret_scanning.github_keys_url = url;
        crate::mail_sink::mail_to(s, sink.port);
    })
    .await;
    let workers = app.start_mail();
    (app, stand_in, sink, workers)
}

fn signature(key: &SigningKey, body: &[u8]) -> String {
    let signature: Signature = key.sign(body);
    base64::engine::general_purpose::STANDARD.encode(signature.to_der().as_bytes())
}

async fn post(app: &TestApp, body: &[u8], headers: &[(&str, &str)]) -> reqwest::Response {
    let mut req = app.client.post(app.url("/secret-scanning/github")).header("content-type", "application/json");
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    req.body(body.to_vec()).send().await.expect("request")
}

/// Posts `body` signed by `key` under the identifier `id`.
async fn alert(app: &TestApp, key: &SigningKey, id: &str, body: &[u8]) -> reqwest::Response {
    let sig = signature(key, body);
    post(app, body, &[("Github-Public-Key-Identifier", id), ("Github-Public-Key-Signature", &sig)]).await
}

fn report(token: &str) -> Value {
    json!({"token": token, "type": "wms_api_key", "url": format!("https://github.com/o/r/blob/main/{}.env", &token[..token.len().min(8)]), "source": "content"})
}

async fn live_key(app: &TestApp, ws: &TestWorkspace, name: &str) -> String {
    create_key(app, ws, &json!({"name": name})).await.0
}

async fn leak_records(app: &TestApp, token: &str) -> Vec<Value> {
    let (_, audit) = app.get_json("/v1/audit-events?action=api_key.revoked&limit=100", token).await;
    audit["data"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn a_signed_alert_revokes_each_live_key_and_labels_every_token() {
    let (app, github) = spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let other = app.create_workspace(PlanTier::Advanced).await;
    let (leaked, elsewhere, untouched) =
        (live_key(&app, &ws, "ci").await, live_key(&app, &other, "deploy").await, live_key(&app, &ws, "kept").await);
    let (dead, dead_record) = create_key(&app, &ws, &json!({"name": "old"})).await;
    let token = admin_token(&app, &ws).await;
    let dead_id = dead_record["id"].as_i64().expect("id");
    let revoke =
        app.authed(reqwest::Method::POST, &format!("/api/workspaces/{}/api-keys/{dead_id}/revoke", ws.id), &token);
    assert_eq!(revoke.send().await.expect("request").status(), 200);
    let unknown = domain::auth::NewToken::generate(domain::auth::TokenKind::ApiKey, &app::platform::OsRandom).secret;
    let unknown_login =
        domain::auth::NewToken::generate(domain::auth::TokenKind::User, &app::platform::OsRandom).secret;
    let user_token = admin_token(&app, &ws).await;
    let mut bad_checksum = leaked.clone();
    bad_checksum.replace_range(8..9, if &leaked[8..9] == "A" { "B" } else { "A" });
    let tokens =
        [&leaked, &elsewhere, &dead, &unknown, &bad_checksum, "wmsk_nope", &user_token, &leaked, &unknown_login];
    let body = serde_json::to_vec(&tokens.iter().map(|t| report(t)).collect::<Vec<_>>()).expect("json");

    let res = alert(&app, &github.current, "current-id", &body).await;
    assert_eq!(res.status(), 200);
    let answer: Value = res.json().await.expect("json");
    let labels: Vec<&str> =
        answer.as_array().expect("array").iter().map(|v| v["label"].as_str().expect("label")).collect();
    assert_eq!(
        labels,
        [
            "true_positive",
            "true_positive",
            "true_positive",
            "false_positive",
            "false_positive",
            "false_positive",
            "true_positive",
            "true_positive",
            "false_positive"
        ]
    );
    for (verdict, sent) in answer.as_array().expect("array").iter().zip(tokens) {
        assert_eq!(verdict["token_raw"], *sent);
        assert_eq!(verdict["token_type"], "wms_api_key");
    }

    problem(channels(&app, &leaked).await, 401, "token_revoked").await;
    problem(channels(&app, &elsewhere).await, 401, "token_revoked").await;
    assert_eq!(channels(&app, &untouched).await.status(), 200);
    // A member's live login token signs in as them: revoked too; the other one is untouched.
    problem(channels(&app, &user_token).await, 401, "token_revoked").await;
    assert_eq!(channels(&app, &token).await.status(), 200);

    // One record per revoked key, by the system, with the reason and where it was found; the key
    // revoked before keeps its one record.
    let records = leak_records(&app, &token).await;
    let leaks: Vec<&Value> = records.iter().filter(|r| r["details"]["reason"] == "leaked").collect();
    assert_eq!(leaks.len(), 1, "{records:?}");
    assert_eq!(leaks[0]["actor"]["type"], "system");
    assert_eq!(leaks[0]["details"]["url"], report(&leaked)["url"]);
    assert!(!leaks[0].to_string().contains(&leaked[5..]));
    let other_records = leak_records(&app, &admin_token(&app, &other).await).await;
    assert_eq!(other_records.len(), 1);
    assert_eq!(other_records[0]["details"]["reason"], "leaked");
}

#[tokio::test]
async fn a_key_github_no_longer_signs_with_still_verifies() {
    let (app, github) = spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let key = live_key(&app, &ws, "ci").await;
    let body = serde_json::to_vec(&json!([report(&key)])).expect("json");
    let res = alert(&app, &github.old, "old-id", &body).await;
    assert_eq!(res.status(), 200);
    problem(channels(&app, &key).await, 401, "token_revoked").await;
}

#[tokio::test]
async fn a_bad_or_missing_signature_is_401_and_changes_nothing() {
    let (app, github) = spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let key = live_key(&app, &ws, "ci").await;
    let body = serde_json::to_vec(&json!([report(&key)])).expect("json");
    let stranger = SigningKey::random(&mut rand::rngs::OsRng);

    problem(alert(&app, &stranger, "current-id", &body).await, 401, "invalid_token").await;
    // The right key over another body.
    let sig = signature(&github.current, b"[]");
    let tampered = [("Github-Public-Key-Identifier", "current-id"), ("Github-Public-Key-Signature", sig.as_str())];
    problem(post(&app, &body, &tampered).await, 401, "invalid_token").await;
    let garbage =
        [("Github-Public-Key-Identifier", "current-id"), ("Github-Public-Key-Signature", "bm90IGEgc2lnbmF0dXJl")];
    problem(post(&app, &body, &garbage).await, 401, "invalid_token").await;
    let sig = signature(&github.current, &body);
    problem(post(&app, &body, &[("Github-Public-Key-Signature", &sig)]).await, 401, "unauthenticated").await;
    problem(post(&app, &body, &[("Github-Public-Key-Identifier", "current-id")]).await, 401, "unauthenticated").await;
    problem(post(&app, &body, &[]).await, 401, "unauthenticated").await;

    assert_eq!(channels(&app, &key).await.status(), 200);
    assert!(sql_bool(&app, "NOT EXISTS (SELECT 1 FROM audit_events WHERE action = 'api_key.revoked')").await);
}

#[tokio::test]
async fn member_credentials_give_nothing_on_the_alert_endpoint() {
    let (app, _github) = spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let key = live_key(&app, &ws, "ci").await;
    let token = admin_token(&app, &ws).await;
    let browser = sign_in(&app, &ws).await;
    let body = serde_json::to_vec(&json!([report(&key)])).expect("json");
    for (name, value) in [
        ("authorization", format!("Bearer {token}")),
        ("authorization", format!("Bearer {key}")),
        ("cookie", browser.cookie.clone()),
    ] {
        problem(post(&app, &body, &[(name, &value), ("x-csrf-token", &browser.csrf)]).await, 401, "unauthenticated")
            .await;
    }
    assert_eq!(channels(&app, &key).await.status(), 200);
}

#[tokio::test]
async fn bodies_github_would_not_send_are_refused_after_the_signature_and_change_nothing() {
    let (app, github) = spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let key = live_key(&app, &ws, "ci").await;

    for body in [json!({"token": key, "type": "wms_api_key"}), json!("x"), json!(null)] {
        let bytes = serde_json::to_vec(&body).expect("json");
        let p = problem(alert(&app, &github.current, "current-id", &bytes).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), ["body"], "{body}");
    }
    let p =
        problem(alert(&app, &github.current, "current-id", b"[{\"token\": 1}]").await, 422, "validation_failed").await;
    assert_eq!(error_fields(&p), ["body[0]"]);
    problem(alert(&app, &github.current, "current-id", b"not json").await, 422, "validation_failed").await;

    // 1,001 tokens, the live key among them: too many, nothing revoked.
    let mut many: Vec<Value> = (0..1000).map(|i| report(&format!("wmsk_{i:0>49}"))).collect();
    many.push(report(&key));
    let bytes = serde_json::to_vec(&many).expect("json");
    problem(alert(&app, &github.current, "current-id", &bytes).await, 413, "payload_too_large").await;
    // Over the 1 MiB body limit: refused before the signature is even checked; unsigned, it is
    // refused as unsigned before the body is read.
    let huge = vec![b' '; 1024 * 1024 + 1];
    problem(alert(&app, &github.current, "current-id", &huge).await, 413, "payload_too_large").await;
    problem(post(&app, &huge, &[]).await, 401, "unauthenticated").await;

    assert_eq!(channels(&app, &key).await.status(), 200);
    // Exactly 1,000 is fine.
    many.remove(0);
    let bytes = serde_json::to_vec(&many).expect("json");
    assert_eq!(alert(&app, &github.current, "current-id", &bytes).await.status(), 200);
    problem(channels(&app, &key).await, 401, "token_revoked").await;
}

#[tokio::test]
async fn a_flood_of_forged_alerts_fetches_the_keys_document_at_most_once_a_second() {
    let (app, github) = spawn().await;
    let forger = SigningKey::random(&mut rand::rngs::OsRng);
    // Forged alerts naming identifiers nobody lists, as fast as they come, for 2.5 seconds.
    let started = std::time::Instant::now();
    let mut sent = 0;
    while started.elapsed() < std::time::Duration::from_millis(2500) {
        problem(alert(&app, &forger, &format!("made-up-{sent}"), b"[]").await, 401, "invalid_token").await;
        sent += 1;
    }
    // The first alert fetches the document; the refresh an unknown identifier asks for is
    // granted once a second at most.
    let fetched = github.fetches.load(Ordering::SeqCst);
    assert!((1..=4).contains(&fetched), "{fetched} fetches for {sent} forged alerts");
    assert_eq!(alert(&app, &github.current, "current-id", b"[]").await.status(), 200);
    assert!(github.fetches.load(Ordering::SeqCst) <= 4);
}

/// A key GitHub publishes verifies as soon as it is listed: an alert naming an identifier the kept
/// document lacks fetches the document again (a second after the last fetch at most).
#[tokio::test]
async fn a_newly_published_key_verifies_without_waiting_for_the_document_to_expire() {
    let (app, github) = spawn().await;
    assert_eq!(alert(&app, &github.current, "current-id", b"[]").await.status(), 200);
    let fresh = SigningKey::random(&mut rand::rngs::OsRng);
    github.publish("fresh-id", &fresh);
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(alert(&app, &fresh, "fresh-id", b"[]").await.status(), 200);
    assert_eq!(github.fetches.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_rolled_key_reported_in_its_grace_period_is_revoked_now() {
    let (app, github) = spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let (key, created) = create_key(&app, &ws, &json!({"name": "ci"})).await;
    let token = admin_token(&app, &ws).await;
    let id = created["id"].as_i64().expect("id");
    let res = app
        .authed(reqwest::Method::POST, &format!("/api/workspaces/{}/api-keys/{id}/roll", ws.id), &token)
        .json(&json!({"grace_seconds": 86400}))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 201);
    assert_eq!(channels(&app, &key).await.status(), 200);
    let body = serde_json::to_vec(&json!([report(&key)])).expect("json");
    assert_eq!(alert(&app, &github.current, "current-id", &body).await.status(), 200);
    problem(channels(&app, &key).await, 401, "token_revoked").await;
}

#[tokio::test]
async fn the_admins_of_a_leaked_keys_workspace_are_emailed() {
    let (app, github, sink, _workers) = spawn_with_mail().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let bystander = app.create_workspace(PlanTier::Advanced).await;
    let (key, record) = create_key(&app, &ws, &json!({"name": "ci deploy"})).await;
    let body = serde_json::to_vec(&json!([report(&key)])).expect("json");
    assert_eq!(alert(&app, &github.current, "current-id", &body).await.status(), 200);

    let mail = sink.wait_for_mail_to(&ws.admin_email, std::time::Duration::from_secs(20)).await;
    assert_eq!(mail.subject, "API key “ci deploy” was leaked and has been revoked");
    let text = mail.text.expect("text part");
    assert!(text.contains(record["masked_key"].as_str().expect("masked")));
    assert!(text.contains(report(&key)["url"].as_str().expect("url")));
    assert!(!text.contains(&key[5..]), "never the key itself");
    // Nobody else is told; a second report of the now revoked key sends nothing more.
    assert_eq!(alert(&app, &github.current, "current-id", &body).await.status(), 200);
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert_eq!(sink.received().len(), 1);
    assert!(sink.to(&bystander.admin_email).is_empty());
}

async fn token_records(app: &TestApp, token: &str) -> Vec<Value> {
    let (status, audit) = app.get_json("/v1/audit-events?action=user.token_revoked&limit=100", token).await;
    assert_eq!(status, 200, "{audit}");
    audit["data"].as_array().cloned().unwrap_or_default()
}

fn login_report(token: &str) -> Value {
    json!({"token": token, "type": "wms_login_token", "url": "https://github.com/o/r/blob/main/notes.md", "source": "content"})
}

fn labels_of(answer: &Value) -> Vec<String> {
    answer.as_array().expect("array").iter().map(|v| v["label"].as_str().expect("label").to_owned()).collect()
}

/// A member's login token is as dangerous as a key while it lives: revoked at once, recorded by
/// the system, and its owner (not the admins) is told; once dead it is a false positive.
#[tokio::test]
async fn a_leaked_login_token_is_revoked_recorded_and_its_owner_emailed_once() {
    let (app, github, sink, _workers) = spawn_with_mail().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let (agent_email, agent_password) = crate::credentials::add_member(&app, ws.id, "agent").await;
    let leaked = crate::credentials::token_for(&app, &agent_email, &agent_password, Some(ws.id)).await;
    let kept = crate::credentials::token_for(&app, &agent_email, &agent_password, Some(ws.id)).await;
    let admin = admin_token(&app, &ws).await;
    assert_eq!(channels(&app, &leaked).await.status(), 200);

    let body = serde_json::to_vec(&json!([login_report(&leaked)])).expect("json");
    let res = alert(&app, &github.current, "current-id", &body).await;
    assert_eq!(res.status(), 200);
    let answer: Value = res.json().await.expect("json");
    assert_eq!(labels_of(&answer), ["true_positive"]);
    assert_eq!(answer[0]["token_type"], "wms_login_token");

    problem(channels(&app, &leaked).await, 401, "token_revoked").await;
    assert_eq!(channels(&app, &kept).await.status(), 200, "only the leaked token goes");
    let records = token_records(&app, &admin).await;
    assert_eq!(records.len(), 1, "{records:?}");
    let record = &records[0];
    assert_eq!(record["actor"]["type"], "system");
    assert_eq!(record["target"]["type"], "user");
    let (_, members) = app.get_json("/v1/users?limit=100", &admin).await;
    let agent = members["data"].as_array().and_then(|d| d.iter().find(|m| m["email"] == agent_email.as_str()).cloned());
    assert_eq!(record["target"]["id"], agent.expect("the agent")["id"]);
    assert_eq!(record["details"]["reason"], "leaked");
    assert_eq!(record["details"]["url"], "https://github.com/o/r/blob/main/notes.md");
    assert!(!record.to_string().contains(&leaked[5..]), "never the token: {record}");

    let mail = sink.wait_for_mail_to(&agent_email, std::time::Duration::from_secs(20)).await;
    assert_eq!(mail.subject, "A sign-in token of your wms account was found in public and has been revoked");
    let text = mail.text.expect("text part");
    assert!(text.contains("https://github.com/o/r/blob/main/notes.md"), "{text}");
    assert!(!text.contains(&leaked[5..]) && !mail.html.unwrap_or_default().contains(&leaked[5..]));

    // Reported again, and an expired token: nothing left to revoke, false positives, no mail.
    let expired = crate::credentials::token_for(&app, &agent_email, &agent_password, Some(ws.id)).await;
    crate::credentials::sql(
        &app,
        "UPDATE user_tokens SET expires_at = now() - interval '1 second' \
         WHERE revoked_at IS NULL AND id = (SELECT max(id) FROM user_tokens)",
    )
    .await;
    problem(channels(&app, &expired).await, 401, "token_expired").await;
    let body = serde_json::to_vec(&json!([login_report(&leaked), login_report(&expired)])).expect("json");
    let res = alert(&app, &github.current, "current-id", &body).await;
    assert_eq!(res.status(), 200);
    assert_eq!(labels_of(&res.json().await.expect("json")), ["false_positive", "false_positive"]);
    assert_eq!(token_records(&app, &admin).await.len(), 1);
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert_eq!(sink.received().len(), 1, "the owner only, once");
    assert!(sink.to(&ws.admin_email).is_empty(), "the admins are not told of a member's token");
}

async fn mcp_tools_list(app: &TestApp, ws: i64, token: &str) -> reqwest::Response {
    app.client
        .post(app.url(&format!("/workspaces/{ws}/co-admin/mcp")))
        .bearer_auth(token)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .expect("request")
}

/// An app's OAuth token acts for the member who granted the app access: a live one revokes the
/// whole grant at once (every token of it), recorded by the system and told to that member; the
/// grant's other token in the same alert is a true positive too, revoked once; afterwards, false
/// positives.
#[tokio::test]
async fn a_leaked_app_token_revokes_its_grant_recorded_and_the_member_emailed_once() {
    let (app, github, sink, _workers) = spawn_with_mail().await;
    let ws = app.create_workspace(PlanTier::Growth).await;
    let browser = sign_in(&app, &ws).await;
    let leaked = crate::oauth::app_token(&app, ws.id, &browser).await;
    let other_app = crate::oauth::app_token(&app, ws.id, &browser).await;
    assert_eq!(mcp_tools_list(&app, ws.id, &leaked).await.status(), 200);
    // A second access token of the same grant, as a refresh would have issued it.
    let sibling = domain::auth::NewToken::generate(domain::auth::TokenKind::AppAccess, &app::platform::OsRandom).secret;
    crate::credentials::sql(
        &app,
        &format!(
            "INSERT INTO oauth_tokens (workspace_id, grant_id, kind, token_digest, expires_at)
             SELECT workspace_id, grant_id, 'access', sha256(convert_to('{sibling}', 'UTF8')), now() + interval '1 hour'
               FROM oauth_tokens ORDER BY id LIMIT 1"
        ),
    )
    .await;
    assert_eq!(mcp_tools_list(&app, ws.id, &sibling).await.status(), 200);
    let report = |token: &str| json!({"token": token, "type": "wms_app_token", "url": "https://github.com/o/r/blob/main/mcp.json", "source": "content"});
    let body = serde_json::to_vec(&json!([report(&leaked), report(&sibling)])).expect("json");
    let res = alert(&app, &github.current, "current-id", &body).await;
    assert_eq!(res.status(), 200);
    let answer: Value = res.json().await.expect("json");
    assert_eq!(labels_of(&answer), ["true_positive", "true_positive"], "both were live");
    assert_eq!(answer[0]["token_type"], "wms_app_token");

    problem(mcp_tools_list(&app, ws.id, &leaked).await, 401, "token_revoked").await;
    problem(mcp_tools_list(&app, ws.id, &sibling).await, 401, "token_revoked").await;
    assert_eq!(mcp_tools_list(&app, ws.id, &other_app).await.status(), 200, "only the leaked token's grant goes");
    assert!(
        sql_bool(
            &app,
            "(SELECT count(*) = 1 FROM audit_events WHERE action = 'oauth.revoked' AND actor_type = 'system'
               AND details->>'reason' = 'leaked' AND details->>'url' = 'https://github.com/o/r/blob/main/mcp.json'
               AND details::text NOT LIKE '%' || substr($$LEAKED$$, 6) || '%')"
                .replace("LEAKED", &leaked)
                .as_str()
        )
        .await,
        "one record, by the system, never the token"
    );
    let mail = sink.wait_for_mail_to(&ws.admin_email, std::time::Duration::from_secs(20)).await;
    assert_eq!(mail.subject, "An app's access to your wms account was found in public and has been revoked");
    let text = mail.text.expect("text part");
    assert!(text.contains("https://github.com/o/r/blob/main/mcp.json") && text.contains("Walker"), "{text}");
    assert!(!text.contains(&leaked[5..]) && !mail.html.unwrap_or_default().contains(&leaked[5..]));

    // Reported again: the grant is gone, false positives, no second record or mail.
    let res = alert(&app, &github.current, "current-id", &body).await;
    assert_eq!(labels_of(&res.json().await.expect("json")), ["false_positive", "false_positive"]);
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert_eq!(sink.received().len(), 1, "the member, once");
    assert!(sql_bool(&app, "(SELECT count(*) = 1 FROM audit_events WHERE action = 'oauth.revoked')").await);
}

fn link_report(token: &str) -> Value {
    json!({"token": token, "type": "wms_login_token", "url": "https://github.com/o/r/blob/main/inbox.eml", "source": "content"})
}

async fn voided_records(app: &TestApp, token: &str) -> Vec<Value> {
    let (status, audit) = app.get_json("/v1/audit-events?action=member.invitation_voided&limit=100", token).await;
    assert_eq!(status, 200, "{audit}");
    audit["data"].as_array().cloned().unwrap_or_default()
}

/// An invitation link in public lets anyone choose the invited account's password and join: a
/// live one is voided at once, recorded, and the admins (who can invite again) are told; the
/// membership stays invited and a new invitation works. Once void it is a false positive.
#[tokio::test]
async fn a_leaked_invitation_link_is_voided_recorded_and_the_admins_emailed_once() {
    let (app, github, sink, _workers) = spawn_with_mail().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let invitee = "new.hire@example.test";
    let added = app.post_json("/v1/users", &admin, &json!({"email": invitee, "role": "agent"})).await;
    assert_eq!(added.status(), 201);
    let person: Value = added.json().await.expect("json");
    let leaked = sink.token_for(invitee, "invitations", 0).await;
    assert_eq!(app.get(&format!("/invitations/{leaked}")).await.status(), 200);

    let body = serde_json::to_vec(&json!([link_report(&leaked), link_report(&leaked)])).expect("json");
    let res = alert(&app, &github.current, "current-id", &body).await;
    assert_eq!(res.status(), 200);
    assert_eq!(labels_of(&res.json().await.expect("json")), ["true_positive", "true_positive"]);

    assert_eq!(app.get(&format!("/invitations/{leaked}")).await.status(), 410, "the link opens nothing");
    let records = voided_records(&app, &admin).await;
    assert_eq!(records.len(), 1, "voided and recorded once: {records:?}");
    let record = &records[0];
    assert_eq!(record["actor"]["type"], "system");
    assert_eq!((&record["target"]["type"], &record["target"]["id"]), (&json!("user"), &person["id"]));
    assert_eq!(record["details"]["reason"], "leaked");
    assert_eq!(record["details"]["url"], "https://github.com/o/r/blob/main/inbox.eml");
    assert_eq!(record["details"]["email"], invitee);
    assert!(!record.to_string().contains(&leaked[5..]), "never the token: {record}");
    let (_, user) = app.get_json(&format!("/v1/users/{}", person["id"]), &admin).await;
    assert_eq!(user["status"], "invited", "the membership stays invited: {user}");

    let mail = sink.wait_for_mail_to(&ws.admin_email, std::time::Duration::from_secs(20)).await;
    assert_eq!(mail.subject, format!("The invitation of {invitee} was found in public and has been voided"));
    let text = mail.text.clone().expect("text part");
    assert!(
        text.contains("https://github.com/o/r/blob/main/inbox.eml") && text.contains("/settings/workspace/members")
    );
    assert!(!text.contains(&leaked[5..]) && !mail.html.unwrap_or_default().contains(&leaked[5..]));

    // Reported again: void already, a false positive, nothing recorded or sent.
    let body = serde_json::to_vec(&json!([link_report(&leaked)])).expect("json");
    let res = alert(&app, &github.current, "current-id", &body).await;
    assert_eq!(labels_of(&res.json().await.expect("json")), ["false_positive"]);
    assert_eq!(voided_records(&app, &admin).await.len(), 1);
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert_eq!(sink.to(&ws.admin_email).len(), 1, "the admin is told once");

    // Inviting the person again sends a new link that works.
    let again = app.post_json("/v1/users", &admin, &json!({"email": invitee, "role": "agent"})).await;
    assert_eq!(again.status(), 201);
    let fresh = sink.token_for(invitee, "invitations", 1).await;
    assert_ne!(fresh, leaked);
    assert_eq!(app.get(&format!("/invitations/{fresh}")).await.status(), 200);
}

/// A reset link in public lets anyone choose the account's password: a live one is voided at once
/// and its owner told; the password is unchanged. Used or expired links are false positives.
#[tokio::test]
async fn a_leaked_password_reset_link_is_voided_and_its_owner_emailed_once() {
    let (app, github, sink, _workers) = spawn_with_mail().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let ask = |email: String| {
        let app = &app;
        async move {
            let body = json!({"email": email});
            let res = app.client.post(app.url("/v1/auth/password-reset")).json(&body).send().await;
            assert_eq!(res.expect("request").status(), 202);
        }
    };
    ask(ws.admin_email.clone()).await;
    let leaked = sink.token_for(&ws.admin_email, "password-reset", 0).await;
    assert_eq!(app.get(&format!("/password-reset/{leaked}")).await.status(), 200);

    let body = serde_json::to_vec(&json!([link_report(&leaked)])).expect("json");
    let res = alert(&app, &github.current, "current-id", &body).await;
    assert_eq!(res.status(), 200);
    assert_eq!(labels_of(&res.json().await.expect("json")), ["true_positive"]);
    assert_eq!(app.get(&format!("/password-reset/{leaked}")).await.status(), 410, "the link sets nothing");
    // The password is unchanged: signing in with it still works.
    admin_token(&app, &ws).await;

    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    let notice = loop {
        let found = sink.to(&ws.admin_email).into_iter().find(|m| m.subject.contains("has been voided"));
        if let Some(mail) = found {
            break mail;
        }
        assert!(tokio::time::Instant::now() < deadline, "no notice to the owner");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(notice.subject, "A password reset link of your wms account was found in public and has been voided");
    let text = notice.text.clone().expect("text part");
    assert!(text.contains("https://github.com/o/r/blob/main/inbox.eml") && text.contains("/password-reset"));
    assert!(!text.contains(&leaked[5..]) && !notice.html.unwrap_or_default().contains(&leaked[5..]));

    // Reported again, and an expired link: false positives, nothing changes, no more mail.
    ask(ws.admin_email.clone()).await;
    let expired = sink.token_for(&ws.admin_email, "password-reset", 2).await;
    crate::credentials::sql(
        &app,
        "UPDATE password_resets SET expires_at = now() - interval '1 second' WHERE used_at IS NULL",
    )
    .await;
    let body = serde_json::to_vec(&json!([link_report(&leaked), link_report(&expired)])).expect("json");
    let res = alert(&app, &github.current, "current-id", &body).await;
    assert_eq!(labels_of(&res.json().await.expect("json")), ["false_positive", "false_positive"]);
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let notices = sink.to(&ws.admin_email).into_iter().filter(|m| m.subject.contains("has been voided")).count();
    assert_eq!(notices, 1, "the owner is told once");
}

/// An alert naming an account's login token and reset link, handled while the owner completes that
/// reset: the two take turns on the account's credentials (the alert locks login tokens before
/// reset links, and so does the completion), so both finish; neither fails on a deadlock.
#[tokio::test]
async fn an_alert_and_a_reset_completion_of_one_account_at_once_both_finish() {
    use crate::password_reset::{until_waiting, with_account_held};

    let (app, github, sink, _workers) = spawn_with_mail().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let token = admin_token(&app, &ws).await;
    let asked = app.client.post(app.url("/v1/auth/password-reset")).json(&json!({"email": ws.admin_email}));
    assert_eq!(asked.send().await.expect("request").status(), 202);
    let link = sink.token_for(&ws.admin_email, "password-reset", 0).await;
    let path = format!("/password-reset/{link}");
    let completion = crate::pages::form_token(&app, &path).await.post(&app, &path, &[("password", "a new password")]);
    let body = serde_json::to_vec(&json!([login_report(&token), link_report(&link)])).expect("json");
    let sig = signature(&github.current, &body);
    let alert = app
        .client
        .post(app.url("/secret-scanning/github"))
        .header("content-type", "application/json")
        .header("Github-Public-Key-Identifier", "current-id")
        .header("Github-Public-Key-Signature", sig)
        .body(body);
    // The completion takes its locks and waits for the held account; the alert starts then: each
    // would hold what the other needs next.
    let (completion, alert) = with_account_held(&app, &ws.admin_email, async {
        let completion = tokio::spawn(completion.send());
        until_waiting(&app, 1).await;
        let alert = tokio::spawn(alert.send());
        until_waiting(&app, 2).await;
        (completion, alert)
    })
    .await;
    let completion = completion.await.expect("task").expect("request").status().as_u16();
    let alert = alert.await.expect("task").expect("request").status().as_u16();
    assert_eq!((completion, alert), (303, 200));
    let login = json!({"email": ws.admin_email, "password": "a new password"});
    let res = app.client.post(app.url("/v1/auth/login")).json(&login).send().await.expect("request");
    assert_eq!(res.status(), 200, "the reset took effect");
}
