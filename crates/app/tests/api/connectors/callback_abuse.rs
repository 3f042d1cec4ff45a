//! Anonymous abuse of the callbacks (they are public and unauthenticated until signed): more than 20 badly signed callbacks a minute from
//! one address are refused (429) on every instance, and a flood of large forged callbacks from
//! many addresses never slows the other routes.

use std::time::{Duration, Instant};

use super::callbacks::client_from;
use super::*;

fn sign_with(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("key");
    mac.update(body);
    format!("sha256={}", mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect::<String>())
}

async fn post(client: &reqwest::Client, base: &str, body: &[u8], signature: &str) -> reqwest::Response {
    client
        .post(format!("{base}/platform-webhooks/whatsapp"))
        .header("content-type", "application/json")
        .header("x-hub-signature-256", signature)
        .body(body.to_vec())
        .send()
        .await
        .expect("request")
}

#[tokio::test]
async fn more_than_twenty_bad_signatures_a_minute_from_one_address_are_refused_on_every_instance() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_channel(&app, &key, "pn-900").await;
    let other_instance = app.spawn_instance();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let body = serde_json::to_vec(&wa_inbound("pn-900", "wamid.ok", "14155550123", "hello", now)).expect("json");
    let forged = sign_with("not-the-app-secret", &body);
    let attacker = client_from(40);
    // Twenty failures, half on each instance: every one is an ordinary 401.
    for i in 0..20 {
        let base = if i % 2 == 0 { &app.address } else { &other_instance };
        problem(post(&attacker, base, &body, &forged).await, 401, "invalid_token").await;
    }
    // The 21st is refused on either instance, even with a valid signature: nothing is applied.
    for base in [&app.address, &other_instance] {
        let res = post(&attacker, base, &body, &sign_with(APP_SECRET, &body)).await;
        let retry: u64 =
            res.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok()).unwrap_or(0);
        assert!((1..=60).contains(&retry), "Retry-After {retry}");
        problem(res, 429, "rate_limited").await;
    }
    let (_, list) = app.get_json(&format!("/v1/messages?channel_id={ch}"), &key).await;
    assert_eq!(list["data"], json!([]), "nothing from a refused address is applied");
    // Another address is not held back.
    let platform = client_from(41);
    assert_eq!(post(&platform, &app.address, &body, &sign_with(APP_SECRET, &body)).await.status(), 200);
    let (_, list) = app.get_json(&format!("/v1/messages?channel_id={ch}"), &key).await;
    assert_eq!(list["data"].as_array().map(Vec::len), Some(1));
}

/// The p99 of `samples`, in milliseconds.
fn p99(samples: &mut [Duration]) -> f64 {
    samples.sort();
    let i = (samples.len() * 99).div_ceil(100).saturating_sub(1);
    samples.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// `GET /healthz` every 10 ms for `length`, from its own client on a thread of its own (so the
/// attackers' tasks never delay the probe itself): each answer's time.
fn probe(base: String, length: Duration) -> std::thread::JoinHandle<Vec<Duration>> {
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(probe_on(base, length))
    })
}

async fn probe_on(base: String, length: Duration) -> Vec<Duration> {
    let client = client_from(2);
    let mut out = Vec::new();
    let end = Instant::now() + length;
    while Instant::now() < end {
        let start = Instant::now();
        let res = client.get(format!("{base}/healthz")).send().await.expect("healthz");
        assert_eq!(res.status(), 200);
        out.push(start.elapsed());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_large_forged_callbacks_never_slows_the_other_routes() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    // 150 connected accounts, each with its own app secret.
    for i in 0..150 {
        let body = json!({"channel_type": "whatsapp", "display_name": format!("Line {i}"), "identifier": format!("+1415555{i:04}"),
            "credentials": {"phone_number_id": format!("pn-flood-{i}"), "access_token": "wa-token-123",
                            "app_secret": format!("app-secret-of-line-{i:04}-padding")}});
        assert_eq!(app.post_json("/v1/channels", &key, &body).await.status(), 201, "channel {i}");
    }
    // ~256 KiB naming 100 of them.
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let entries: Vec<Value> = (0..100)
        .map(|i| {
            wa_inbound(&format!("pn-flood-{i}"), &format!("wamid.f{i}"), "14155550123", "x", now)["entry"][0].clone()
        })
        .collect();
    let unpadded =
        serde_json::to_vec(&json!({"object": "whatsapp_business_account", "entry": entries, "pad": ""})).expect("json");
    let pad = 256 * 1024 - 64 - unpadded.len();
    let body =
        serde_json::to_vec(&json!({"object": "whatsapp_business_account", "entry": entries, "pad": "p".repeat(pad)}))
            .expect("json");
    let forged = sign_with("forged", &body);

    let mut quiet = probe(app.address.clone(), Duration::from_secs(2)).join().expect("probe");
    let length = Duration::from_secs(5);
    let start = Instant::now();
    let mut attackers = Vec::new();
    for c in 0..8u8 {
        let (base, body, forged) = (app.address.clone(), body.clone(), forged.clone());
        attackers.push(tokio::spawn(async move {
            let (mut sent, mut refused) = (0u32, 0u32);
            // Each attacker moves to a fresh address once one is refused, so the flood keeps
            // reaching the signature check instead of stopping at the address's budget.
            for n in 0..200u8 {
                let client = reqwest::Client::builder()
                    .local_address(std::net::IpAddr::from([127, 1 + c, 0, n]))
                    .build()
                    .expect("client");
                loop {
                    if start.elapsed() > length {
                        return (sent, refused);
                    }
                    let status = post(&client, &base, &body, &forged).await.status().as_u16();
                    sent += 1;
                    assert!(status == 401 || status == 429, "{status}");
                    if status == 429 {
                        refused += 1;
                        break;
                    }
                }
            }
            (sent, refused)
        }));
    }
    let prober = probe(app.address.clone(), length);
    let (mut sent, mut refused) = (0, 0);
    for a in attackers {
        let (s, r) = a.await.expect("attacker");
        sent += s;
        refused += r;
    }
    let mut loaded = prober.join().expect("probe");
    let probes = loaded.len();
    let (quiet, loaded) = (p99(&mut quiet), p99(&mut loaded));
    eprintln!(
        "flood: {sent} forged callbacks of {} bytes in {length:?} ({refused} refused with 429); /healthz p99 {quiet:.1} ms quiet, {loaded:.1} ms under the flood ({} probes)",
        body.len(),
        probes
    );
    assert!(sent >= 100, "the flood was a flood: {sent} callbacks");
    // 100 ms is the target; on a machine other work slows down too, an answer within three
    // times the quiet p99 still shows the flood is not what holds /healthz back.
    assert!(
        loaded < 100.0 || loaded < 3.0 * quiet,
        "/healthz p99 {loaded:.1} ms under the flood ({quiet:.1} ms quiet)"
    );
}

#[tokio::test]
async fn concurrent_bad_signatures_on_two_instances_all_count() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    whatsapp_channel(&app, &key, "pn-901").await;
    let other_instance = app.spawn_instance();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let body = serde_json::to_vec(&wa_inbound("pn-901", "wamid.race", "14155550124", "hi", now)).expect("json");
    let forged = sign_with("not-the-app-secret", &body);
    let attacker = client_from(42);
    // Fifteen at once, under the budget of twenty: each one is counted, none lost to a race.
    let sends = (0..15).map(|i| {
        let base = if i % 2 == 0 { app.address.clone() } else { other_instance.clone() };
        let (attacker, body, forged) = (attacker.clone(), body.clone(), forged.clone());
        async move { post(&attacker, &base, &body, &forged).await.status().as_u16() }
    });
    let statuses = futures_util::future::join_all(sends).await;
    assert!(statuses.iter().all(|s| *s == 401), "{statuses:?}");
    assert!(
        crate::credentials::sql_bool(
            &app,
            "(SELECT cardinality(failed_at) = 15 FROM login_throttle WHERE subject = 'callback:ip:127.0.0.42')"
        )
        .await
    );
}
