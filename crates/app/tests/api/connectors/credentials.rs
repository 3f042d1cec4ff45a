//! Channel credentials: sealed, bound to their row, never returned, and stored only once the
//! platform confirms the account.

use super::*;

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
            "(SELECT failure_reason FROM messages WHERE channel_id = {ch} AND direction = 'outbound') = \
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

/// docs/contract.md, "Abuse limits": credentials bind a channel to its platform account only after
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
