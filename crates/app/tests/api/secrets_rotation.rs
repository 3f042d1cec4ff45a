//! Secrets at rest: `wms secrets rotate-key` re-encrypts every secret under a new key in batches
//! while a server keeps reading them, is safe to run again, and refuses a bad key; a webhook
//! secret moved onto another destination is refused with a problem, not a 500.

use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use adapters_postgres::sealed::{self, SEALED_COLUMNS};
use app::platform::XChaChaCipher;
use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit};
use domain::common::ports::SecretCipher;
use serde_json::{json, Value};

use crate::credentials::sql;
use crate::helpers::{problem, TestApp};

const PUBLIC_URL: &str = "https://93.184.215.14/hooks/wms";

fn raw_key(b: u8) -> [u8; 32] {
    [b; 32]
}

fn key(b: u8) -> String {
    base64::engine::general_purpose::STANDARD.encode(raw_key(b))
}

fn wms(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wms"));
    cmd.args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("WMS") || k == "DATABASE_URL" || k == "RUST_LOG" {
            cmd.env_remove(k);
        }
    }
    cmd.envs(env.iter().copied());
    cmd.output().expect("run wms")
}

async fn destination(app: &TestApp, key: &str) -> (i64, String) {
    let body = json!({"url": PUBLIC_URL, "platform": "custom", "events": ["message.created"], "active": true});
    let res = app.post_json("/v1/webhooks", key, &body).await;
    assert_eq!(res.status(), 201);
    let v: Value = res.json().await.expect("json");
    (v["id"].as_i64().expect("id"), v["secret"].as_str().expect("secret").to_owned())
}

async fn channel(app: &TestApp, key: &str, n: u32) {
    let body = json!({"channel_type": "whatsapp", "display_name": "Support", "identifier": format!("+1415555{n:04}"),
        "credentials": {"phone_number_id": format!("pn-rot-{n}"), "access_token": "wa-token-123", "app_secret": "app-secret-1"}});
    let res = app.post_json("/v1/channels", key, &body).await;
    assert_eq!(res.status(), 201, "{}", res.text().await.unwrap_or_default());
}

/// Every stored sealed value, opened with `cipher`: `(opened, refused)`.
async fn open_all(app: &TestApp, cipher: &XChaChaCipher) -> (usize, usize) {
    let (mut opened, mut refused) = (0, 0);
    for col in SEALED_COLUMNS {
        for v in sealed::batch(&app.db, col, 0, 10_000).await.expect("batch") {
            match cipher.open(&v.sealed, &(col.place)(v.workspace_id, v.id)) {
                Ok(_) => opened += 1,
                Err(_) => refused += 1,
            }
        }
    }
    (opened, refused)
}

#[tokio::test]
async fn rotate_key_reencrypts_everything_while_a_server_reads_and_then_the_new_key_alone_opens_it() {
    // Step 1 of the procedure: the instances seal with the old key and can read the new one.
    let (old, new) = (key(1), key(2));
    let graph = crate::connectors::Graph::start();
    let graph_url = graph.url.clone();
    let app = TestApp::spawn_with(move |s| {
        s.connectors.graph_base_url = graph_url;
        s.connectors.workers = 0;
        s.secrets.encryption_key = Some(key(1));
        s.secrets.previous_keys = vec![key(2)];
    })
    .await;
    let (_, api_key) = app.advanced_with_key().await;
    let mut destinations = Vec::new();
    for _ in 0..5 {
        destinations.push(destination(&app, &api_key).await);
    }
    for n in 0..3 {
        channel(&app, &api_key, n).await;
    }
    // A rotated secret leaves a previous one; and one secret as an earlier version wrote it
    // (version 1: no key id, no associated data).
    let res = app.post_json(&format!("/v1/webhooks/{}/secret/rotate", destinations[0].0), &api_key, &json!({})).await;
    assert_eq!(res.status(), 200);
    destinations[0].1 = res.json::<Value>().await.expect("json")["secret"].as_str().expect("secret").to_owned();
    let nonce = [5u8; 24];
    let ct = chacha20poly1305::XChaCha20Poly1305::new((&raw_key(1)).into())
        .encrypt(chacha20poly1305::XNonce::from_slice(&nonce), destinations[1].1.as_bytes())
        .expect("encrypt");
    let v1: String = [&[1u8][..], &nonce, &ct].concat().iter().map(|b| format!("{b:02x}")).collect();
    sql(
        &app,
        &format!("UPDATE webhook_destinations SET secret_encrypted = '\\x{v1}' WHERE id = {}", destinations[1].0),
    )
    .await;
    let stored = 5 + 1 + 3;
    assert_eq!(open_all(&app, &XChaChaCipher::new(&raw_key(2))).await, (0, stored), "nothing under the new key yet");

    // A server reads every secret again and again while the rotation runs.
    let stop = Arc::new(AtomicBool::new(false));
    let (reads, wrong) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let reader = {
        let (client, base, api_key) = (app.client.clone(), app.url(""), api_key.clone());
        let (stop, reads, wrong, destinations) = (stop.clone(), reads.clone(), wrong.clone(), destinations.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                for (id, secret) in &destinations {
                    let res = client.get(format!("{base}/v1/webhooks/{id}/secret")).bearer_auth(&api_key).send().await;
                    let got = match res {
                        Ok(r) if r.status() == 200 => r.json::<Value>().await.ok(),
                        _ => None,
                    };
                    if got.as_ref().and_then(|v| v["secret"].as_str()) != Some(secret.as_str()) {
                        wrong.fetch_add(1, Ordering::Relaxed);
                    }
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let env = [("DATABASE_URL", app.database.url.as_str()), ("WMS__SECRETS__ENCRYPTION_KEY", old.as_str())];
    let rotate = |args: Vec<String>| {
        let env: Vec<(String, String)> = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            wms(&args, &env)
        })
    };
    let args = |k: &str| {
        vec!["secrets".into(), "rotate-key".into(), "--new-key".into(), k.to_owned(), "--batch-size".into(), "2".into()]
    };
    let out = rotate(args(&new)).await.expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(&format!("re-encrypted {stored} secrets")), "{stdout}");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    stop.store(true, Ordering::Relaxed);
    reader.await.expect("reader");
    assert!(reads.load(Ordering::Relaxed) >= destinations.len() * 2, "the server was read during the rotation");
    assert_eq!(wrong.load(Ordering::Relaxed), 0, "every read during the rotation gave the secret");

    // Afterwards the new key alone opens everything, and the old one nothing.
    assert_eq!(open_all(&app, &XChaChaCipher::new(&raw_key(2))).await, (stored, 0));
    assert_eq!(open_all(&app, &XChaChaCipher::new(&raw_key(1))).await, (0, stored));

    // Again: nothing to do.
    let out = rotate(args(&new)).await.expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("re-encrypted 0 secrets") && stdout.contains(&format!("{stored} already")), "{stdout}");

    // A server with only the new key serves every secret.
    let mut only_new = app.settings.clone();
    only_new.secrets.encryption_key = Some(new.clone());
    only_new.secrets.previous_keys = Vec::new();
    let db = adapters_postgres::Db::new(&app.database.url, 2, only_new.database.acquire_timeout()).expect("pool");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let server = app::wiring::server(&only_new, &db, app::wiring::state(&only_new, &db), listener).expect("server");
    tokio::spawn(server);
    for (id, secret) in &destinations {
        let res =
            app.client.get(format!("{base}/v1/webhooks/{id}/secret")).bearer_auth(&api_key).send().await.expect("req");
        assert_eq!(res.status(), 200);
        assert_eq!(res.json::<Value>().await.expect("json")["secret"], secret.as_str());
    }
}

#[tokio::test]
async fn rotate_key_refuses_a_bad_key_with_exit_2_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let (_, api_key) = app.advanced_with_key().await;
    destination(&app, &api_key).await;
    let current = app.settings.secrets.encryption_key.clone().expect("key");
    let env = [("DATABASE_URL", app.database.url.as_str()), ("WMS__SECRETS__ENCRYPTION_KEY", current.as_str())];
    let short = base64::engine::general_purpose::STANDARD.encode([1u8; 16]);
    for bad in ["not base64!", short.as_str(), ""] {
        let out = wms(&["secrets", "rotate-key", "--new-key", bad], &env);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {err}");
        assert!(err.contains("--new-key") && !err.contains("panicked"), "{err}");
    }
    let cipher = app::secrets::cipher_of(&app.settings).expect("cipher");
    let mut opened = 0;
    for col in SEALED_COLUMNS {
        for v in sealed::batch(&app.db, col, 0, 100).await.expect("batch") {
            cipher.open(&v.sealed, &(col.place)(v.workspace_id, v.id)).expect("still under the old key");
            opened += 1;
        }
    }
    assert_eq!(opened, 1);
}

#[tokio::test]
async fn a_webhook_secret_moved_onto_another_destination_is_refused_with_a_problem() {
    let app = TestApp::spawn().await;
    let (_, api_key) = app.advanced_with_key().await;
    let (a, secret_a) = destination(&app, &api_key).await;
    let (b, _) = destination(&app, &api_key).await;
    sql(
        &app,
        &format!(
            "UPDATE webhook_destinations SET secret_encrypted = (SELECT secret_encrypted FROM webhook_destinations \
             WHERE id = {a}) WHERE id = {b}"
        ),
    )
    .await;
    let res =
        app.authed(reqwest::Method::GET, &format!("/v1/webhooks/{b}/secret"), &api_key).send().await.expect("req");
    let p = problem(res, 409, "conflict").await;
    assert!(p["detail"].as_str().unwrap_or("").contains("rotate the secret"), "{p}");
    let (status, got) = app.get_json(&format!("/v1/webhooks/{a}/secret"), &api_key).await;
    assert_eq!((status, got["secret"].as_str()), (200, Some(secret_a.as_str())));
    // Rotating gives the destination a secret of its own again.
    let res = app.post_json(&format!("/v1/webhooks/{b}/secret/rotate"), &api_key, &json!({})).await;
    assert_eq!(res.status(), 200);
    let (status, _) = app.get_json(&format!("/v1/webhooks/{b}/secret"), &api_key).await;
    assert_eq!(status, 200);
}
