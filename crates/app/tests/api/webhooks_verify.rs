//! Signatures checked by a library nobody here wrote: the PyPI `standardwebhooks` package
//! (`Webhook(secret).verify`) verifies real deliveries, also during a secret rotation, when each
//! delivery carries two signatures and receivers holding either secret accept it.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use domain::webhooks::EventType;
use serde_json::{json, Value};

use crate::helpers::TestApp;
use crate::webhooks_delivery::{destination, emit, loopback};
use crate::webhooks_receiver::{Received, Receiver};

const VERIFY: &str = r#"
import base64, json, sys
from standardwebhooks.webhooks import Webhook
for case in json.load(sys.stdin):
    try:
        payload = Webhook(case["secret"]).verify(base64.b64decode(case["body"]), case["headers"])
        print(json.dumps({"ok": True, "type": payload.get("type")}))
    except Exception as e:
        print(json.dumps({"ok": False, "error": repr(e)}))
"#;

/// The Python of the test virtualenv, with `standardwebhooks` installed (by `scripts/py-deps`
/// if it is not yet).
fn python() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let candidate =
        std::env::var_os("WMS_TEST_PYTHON").map(PathBuf::from).unwrap_or_else(|| root.join(".venv-tests/bin/python"));
    let importable = |p: &PathBuf| {
        Command::new(p).args(["-c", "import standardwebhooks"]).output().is_ok_and(|o| o.status.success())
    };
    if importable(&candidate) {
        return candidate;
    }
    let status = Command::new(root.join("scripts/py-deps")).status().expect("run scripts/py-deps");
    assert!(status.success(), "scripts/py-deps failed: the standardwebhooks package is required for this test");
    let venv = root.join(".venv-tests/bin/python");
    assert!(importable(&venv), "standardwebhooks is not importable from {}", venv.display());
    venv
}

/// Verifies each delivery with each secret; one JSON line per case.
pub(crate) fn verify(cases: &[(String, &Received)]) -> Vec<Value> {
    let input: Vec<Value> = cases
        .iter()
        .map(|(secret, r)| {
            json!({
                "secret": secret,
                "headers": {
                    "webhook-id": r.header("webhook-id"),
                    "webhook-timestamp": r.header("webhook-timestamp"),
                    "webhook-signature": r.header("webhook-signature"),
                },
                "body": base64::engine::general_purpose::STANDARD.encode(&r.body),
            })
        })
        .collect();
    let mut child = Command::new(python())
        .args(["-c", VERIFY])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python");
    child.stdin.take().expect("stdin").write_all(Value::Array(input).to_string().as_bytes()).expect("write");
    let out = child.wait_with_output().expect("python");
    assert!(out.status.success(), "python failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("json line")).collect()
}

#[tokio::test]
async fn standardwebhooks_verifies_deliveries_before_during_and_after_rotation() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let (id, old_secret) = destination(&app, &key, &receiver.url("/hook"), &["message.created"]).await;
    let workers = app::webhooks::start(
        &app.settings,
        app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
    );

    emit(&app, ws.id, EventType::MessageCreated, json!({"id": 1, "content": "héllo ✓ \"quoted\""})).await;
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    let before = got[0].clone();
    assert_eq!(before.header("webhook-signature").split(' ').count(), 1);

    let res = app.post_json(&format!("/v1/webhooks/{id}/secret/rotate"), &key, &json!({})).await;
    let new_secret = res.json::<Value>().await.expect("json")["secret"].as_str().expect("secret").to_owned();
    emit(&app, ws.id, EventType::MessageCreated, json!({"id": 2})).await;
    let got = receiver.wait_for(2, Duration::from_secs(10)).await;
    let during = got[1].clone();
    assert_eq!(during.header("webhook-signature").split(' ').count(), 2, "new and old secret sign");

    // The test event is signed the same way.
    let res = app.post_json(&format!("/v1/webhooks/{id}/test"), &key, &json!({})).await;
    assert_eq!(res.status(), 200);
    let test = receiver.received()[2].clone();
    workers.stop(Duration::from_secs(5)).await;

    let wrong = format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode([42u8; 32]));
    let results = verify(&[
        (old_secret.clone(), &before),
        (new_secret.clone(), &during),
        (old_secret.clone(), &during),
        (new_secret.clone(), &test),
        (old_secret.clone(), &test),
        (wrong.clone(), &during),
        (new_secret.clone(), &before),
    ]);
    let ok: Vec<bool> = results.iter().map(|r| r["ok"] == true).collect();
    assert_eq!(ok, [true, true, true, true, true, false, false], "{results:?}");
    assert_eq!(results[0]["type"], "message.created");
    assert_eq!(results[3]["type"], "webhook.test");

    // After the overlap only the new secret signs.
    let mut conn = app.db.conn().await.expect("conn");
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query(format!(
            "UPDATE webhook_destinations SET previous_secret_expires_at = now() - interval '1 second' WHERE id = {id}"
        )),
        &mut conn,
    )
    .await
    .expect("expire");
    let res = app.post_json(&format!("/v1/webhooks/{id}/test"), &key, &json!({})).await;
    assert_eq!(res.status(), 200);
    let after = receiver.received()[3].clone();
    assert_eq!(after.header("webhook-signature").split(' ').count(), 1);
    let results = verify(&[(new_secret, &after), (old_secret, &after)]);
    let ok: Vec<bool> = results.iter().map(|r| r["ok"] == true).collect();
    assert_eq!(ok, [true, false], "{results:?}");
}
