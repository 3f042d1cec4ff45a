//! Callbacks: the signature, the subscription handshake, and bodies too large or naming unknown
//! accounts.

use super::*;

#[tokio::test]
async fn callbacks_need_the_signature_of_an_account_they_name() {
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

    // Only the secrets of the accounts named count: a body naming no connected account, another
    // object or a broken body proves nothing, even signed with a real app secret.
    problem(
        callback(&app, "whatsapp", &wa_inbound("pn-unknown", "w", "14155550199", "x", now), None).await,
        401,
        "invalid_token",
    )
    .await;
    problem(callback(&app, "whatsapp", &json!({"object": "page", "entry": []}), None).await, 401, "invalid_token")
        .await;
    let res = app
        .client
        .post(app.url("/platform-webhooks/whatsapp"))
        .header("x-hub-signature-256", sign(b"{not json"))
        .body("{not json")
        .send()
        .await
        .expect("request");
    problem(res, 401, "invalid_token").await;
    // A validly signed body for the connected account with nothing wms reads is acknowledged.
    let empty = json!({"object": "whatsapp_business_account", "entry": [{"id": "waba-1", "changes": [{"field": "messages",
        "value": {"metadata": {"phone_number_id": "pn-500"}}}]}]});
    assert_eq!(callback(&app, "whatsapp", &empty, None).await.status(), 200);
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
    send_callback(&app.client, base, platform, body, signature).await
}

async fn send_callback(
    client: &reqwest::Client,
    base: &str,
    platform: &str,
    body: Vec<u8>,
    signature: Option<&str>,
) -> reqwest::Response {
    let mut req =
        client.post(format!("{base}/platform-webhooks/{platform}")).header("content-type", "application/json");
    if let Some(s) = signature {
        req = req.header("x-hub-signature-256", s);
    }
    req.body(body).send().await.expect("request")
}

/// A client whose connections come from `127.0.0.<n>` (the whole of 127/8 is loopback), so
/// that a test can be several client addresses, each with its own budget of bad signatures.
pub(crate) fn client_from(n: u8) -> reqwest::Client {
    reqwest::Client::builder().local_address(std::net::IpAddr::from([127, 0, 0, n])).build().expect("client")
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
    // Each body from its own address: 5 bad signatures each, within every address's budget.
    for (n, (name, body)) in (10u8..).zip(bodies(now)) {
        let client = client_from(n);
        let forged = sign_with("not-the-app-secret", &body);
        for signature in [None, Some("sha256=zz"), Some(""), Some("sha1=00"), Some(forged.as_str())] {
            let res = send_callback(&client, &app.address, "whatsapp", body.clone(), signature).await;
            let p = problem(res, 401, "invalid_token").await;
            details.insert(p["detail"].as_str().unwrap_or_default().to_owned());
            assert!(!p.to_string().contains("pn-"), "{name}: the answer names an account: {p}");
        }
    }
    assert_eq!(details.len(), 1, "one answer for every bad signature: {details:?}");
    let (_, list) = app.get_json(&format!("/v1/messages?channel_id={ch}"), &key).await;
    assert_eq!(list["data"], json!([]), "nothing from a bad signature is stored");
    // The same bodies, signed with the app secret: accepted when they name its account.
    for (name, body) in bodies(now) {
        let signature = sign_with(APP_SECRET, &body);
        let res = raw_callback(&app.address, &app, "whatsapp", body, Some(&signature)).await;
        let expected = if name.contains("known") && name != "unknown" { 200 } else { 401 };
        assert_eq!(res.status(), expected, "{name}");
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
async fn an_unsigned_body_naming_thousands_of_accounts_costs_one_query_and_an_oversized_one_none() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let page = "104829301928374";
    let body = json!({"channel_type": "messenger", "display_name": "Page", "identifier": page, "credentials": {
        "page_id": page, "access_token": "page-token-1", "app_secret": APP_SECRET}});
    assert_eq!(app.post_json("/v1/channels", &key, &body).await.status(), 201);
    let counter = crate::statements::StatementCounter::start(&app.database.url).await;
    let base = app.spawn_instance_at(&counter.url);

    // 5,000 pages, the connected one among them, padded to just under the 256 KiB limit.
    let mut entry: Vec<Value> =
        (0..5_000).map(|i| json!({"id": format!("{:015}", 200_000_000_000_000u64 + i), "messaging": []})).collect();
    entry[0] = json!({"id": page, "messaging": []});
    let unpadded = serde_json::to_vec(&json!({"object": "page", "entry": entry, "pad": ""})).expect("json");
    let pad = 256 * 1024 - unpadded.len();
    let flood = serde_json::to_vec(&json!({"object": "page", "entry": entry, "pad": "p".repeat(pad)})).expect("json");
    assert_eq!(flood.len(), 256 * 1024);

    let before = counter.statements();
    let forged = sign_with("forged", &flood);
    let res = raw_callback(&base, &app, "messenger", flood.clone(), Some(&forged)).await;
    problem(res, 401, "invalid_token").await;
    let res = raw_callback(&base, &app, "messenger", flood.clone(), None).await;
    problem(res, 401, "invalid_token").await;
    let spent = counter.statements() - before;
    // The address's record and the first accounts named once, the failure counted under the
    // address's lock (a transaction of five): a handful, not 5,000.
    assert!(spent <= 16, "{spent} statements for two unsigned callbacks");

    // One byte more is refused before it is read, signed or not, with no statement at all.
    let mut oversized = flood;
    oversized.push(b' ');
    let signature = sign_with(APP_SECRET, &oversized);
    let before = counter.statements();
    for signature in [None, Some(signature.as_str())] {
        let res = raw_callback(&base, &app, "messenger", oversized.clone(), signature).await;
        let p = problem(res, 413, "payload_too_large").await;
        assert!(p["detail"].as_str().unwrap_or_default().contains("262144"), "{p}");
    }
    assert_eq!(counter.statements(), before, "an oversized body costs no statement");

    // The counter does see the server's queries: a signed callback for the page is applied.
    let before = counter.statements();
    let inbound = serde_json::to_vec(&json!({"object": "page", "entry": [{"id": page, "time": 1, "messaging": [
        {"sender": {"id": "psid1"}, "recipient": {"id": page}, "timestamp": 1_700_000_000_000i64, "message": {"mid": "m1", "text": "yo"}}]}]}))
    .expect("json");
    let signature = sign_with(APP_SECRET, &inbound);
    assert_eq!(raw_callback(&base, &app, "messenger", inbound, Some(&signature)).await.status(), 200);
    assert!(counter.statements() > before, "the counter missed the applied callback");
}
