//! Secrets never need the command line (where the process list shows them): `wms listen` takes its key from `WMS_API_KEY`
//! and `wms secrets rotate-key` its key from `WMS_NEW_ENCRYPTION_KEY`, through the real binary;
//! the flags still work, warn that the process list shows them, and bad values name the variable.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};

use crate::assistant_helpers::sql_json;
use crate::helpers::TestApp;
use crate::webhooks_receiver::Receiver;

/// The real binary with none of the test's own `WMS…` variables.
fn wms() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wms"));
    for (k, _) in std::env::vars() {
        if k.starts_with("WMS") || k == "DATABASE_URL" || k == "RUST_LOG" {
            cmd.env_remove(k);
        }
    }
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_help_names_the_variables_and_warns_about_the_flags() {
    for (args, variable, flag) in [
        (&["listen"][..], "WMS_API_KEY", "--key"),
        (&["secrets", "rotate-key"][..], "WMS_NEW_ENCRYPTION_KEY", "--new-key"),
    ] {
        let out = wms().args(args).arg("--help").output().expect("run");
        let help = text(&out.stdout);
        assert!(help.contains(variable) && help.contains(flag), "{help}");
        assert!(help.contains("process list"), "{help}");
    }
}

#[tokio::test]
async fn listen_takes_its_key_from_wms_api_key_and_refuses_a_bad_one_naming_it() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    app.channel(&key, "messenger", "page-listen-env", "active").await;
    let receiver = Receiver::start().await;
    let dir = std::env::temp_dir().join(format!("wms-listen-env-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let state = dir.join("state.json");

    let mut child = wms()
        .args([
            "listen",
            "--api-url",
            &app.address,
            "--forward-to",
            &receiver.url("/local"),
            "--poll-interval-ms",
            "100",
        ])
        .arg("--state-file")
        .arg(&state)
        .env("WMS_API_KEY", &key)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start wms listen");
    let got = receiver.wait_for(1, Duration::from_secs(20)).await;
    let _ = child.kill();
    let out = child.wait_with_output().expect("wait");
    assert_eq!(got.len(), 1, "the event was forwarded");
    assert_eq!(got[0].json()["type"], "channel.created");
    assert!(!text(&out.stderr).contains("warning"), "no warning for the variable: {}", text(&out.stderr));

    // The flag still works for scripts, and says what it costs.
    let start = Instant::now();
    let out = wms()
        .args(["listen", "--api-url", &app.address, "--key", &format!("{key}x"), "--forward-to", &receiver.url("/l")])
        .arg("--state-file")
        .arg(dir.join("other.json"))
        .output()
        .expect("run");
    assert!(start.elapsed() < Duration::from_secs(20));
    assert!(!out.status.success(), "a refused key stops listen");
    assert!(
        text(&out.stderr).contains("process list") && text(&out.stderr).contains("WMS_API_KEY"),
        "{}",
        text(&out.stderr)
    );

    // Bad values from the variable: exit 2, naming it; an empty one is a missing key.
    for (bad, needle) in [("not-a-key", "WMS_API_KEY"), ("", "--key")] {
        let out = wms()
            .args(["listen", "--api-url", &app.address, "--forward-to", &receiver.url("/l")])
            .env("WMS_API_KEY", bad)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(needle), "{bad:?}: {}", text(&out.stderr));
        assert!(!text(&out.stderr).contains("panicked"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The sealed secrets of the workspace's webhook destinations, as stored.
async fn sealed(app: &TestApp) -> Value {
    sql_json(
        app,
        "SELECT json_agg(encode(secret_encrypted, 'hex') ORDER BY id)::text AS j FROM webhook_destinations WHERE $1 > 0",
        1,
    )
    .await
}

#[tokio::test]
async fn rotate_key_takes_the_new_key_from_wms_new_encryption_key_and_refuses_a_bad_one_naming_it() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let body = json!({"url": "https://93.184.215.14/hooks/wms", "events": ["message.created"]});
    assert_eq!(app.post_json("/v1/webhooks", &key, &body).await.status(), 201);
    let current = app.settings.secrets.encryption_key.clone().expect("key");
    let base = |cmd: &mut Command| {
        cmd.env("DATABASE_URL", &app.database.url).env("WMS__SECRETS__ENCRYPTION_KEY", &current);
    };
    let before = sealed(&app).await;

    // Bad values from the variable: exit 2, naming it, nothing re-encrypted.
    let short = base64::engine::general_purpose::STANDARD.encode([1u8; 16]);
    for bad in ["not base64!", short.as_str()] {
        let mut cmd = wms();
        base(&mut cmd);
        let out: Output = cmd.args(["secrets", "rotate-key"]).env("WMS_NEW_ENCRYPTION_KEY", bad).output().expect("run");
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("WMS_NEW_ENCRYPTION_KEY"), "{}", text(&out.stderr));
        assert!(!text(&out.stderr).contains(bad), "the refused key is not echoed");
    }
    let mut cmd = wms();
    base(&mut cmd);
    let out = cmd.args(["secrets", "rotate-key"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2), "no key at all");
    assert_eq!(sealed(&app).await, before, "nothing changed");

    let new = base64::engine::general_purpose::STANDARD.encode([7u8; 32]);
    let mut cmd = wms();
    base(&mut cmd);
    let out = cmd.args(["secrets", "rotate-key"]).env("WMS_NEW_ENCRYPTION_KEY", &new).output().expect("run");
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("re-encrypted 1 secrets"), "{}", text(&out.stdout));
    assert!(!text(&out.stderr).contains("warning"), "{}", text(&out.stderr));
    assert_ne!(sealed(&app).await, before, "re-encrypted under the new key");

    // The flag still works, with the warning.
    let mut cmd = wms();
    base(&mut cmd);
    cmd.env("WMS__SECRETS__ENCRYPTION_KEY", &new);
    let out = cmd.args(["secrets", "rotate-key", "--new-key", &new]).output().expect("run");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("process list"), "{}", text(&out.stderr));
}
