//! The settings web app in a real browser: headless Chromium (Debian's `chromium`) driven by
//! Playwright for Python (`crates/app/tests/py/settings_browser.py`), against the real server.
//! Missing dependencies are installed by `scripts/browser-deps` (never `playwright install`).
//!
//! Screenshots go to `target/screenshots/`; with `WMS_UPDATE_SCREENSHOTS=1` they replace the
//! ones in `docs/screenshots/` that the README shows.

use std::path::PathBuf;
use std::process::Command;

use crate::helpers::TestApp;
use crate::webhooks_receiver::Receiver;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python of the test virtualenv with Playwright, and Chromium at /usr/bin/chromium,
/// installing either when missing.
fn python() -> PathBuf {
    let candidate =
        std::env::var_os("WMS_TEST_PYTHON").map(PathBuf::from).unwrap_or_else(|| root().join(".venv-tests/bin/python"));
    let ready = |p: &PathBuf| {
        std::path::Path::new("/usr/bin/chromium").exists()
            && Command::new(p).args(["-c", "import playwright.sync_api"]).output().is_ok_and(|o| o.status.success())
    };
    if ready(&candidate) {
        return candidate;
    }
    let status = Command::new(root().join("scripts/browser-deps")).status().expect("run scripts/browser-deps");
    assert!(status.success(), "scripts/browser-deps failed: Chromium and Playwright are required for this test");
    let venv = root().join(".venv-tests/bin/python");
    assert!(ready(&venv), "Chromium or Playwright still missing after scripts/browser-deps");
    venv
}

/// Runs `crates/app/tests/py/<script>` with `env` and asserts it ended well (exit 0 and
/// `{"ok": true}`); its output.
pub async fn run_script(script: &str, env: &[(&str, String)]) -> String {
    let mut cmd = tokio::process::Command::new(python());
    cmd.arg(root().join("crates/app/tests/py").join(script)).envs(env.iter().map(|(k, v)| (k, v))).kill_on_drop(true);
    let out = tokio::time::timeout(std::time::Duration::from_secs(240), cmd.output())
        .await
        .expect("the browser run took over 4 minutes")
        .expect("run the browser script");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains("{\"ok\": true}"),
        "browser run failed\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_pages_work_in_headless_chromium() {
    // The script runs the SMTP server (aiosmtpd) the invitation and reset e-mails go to.
    let smtp_port = crate::mail_sink::free_port();
    let app = TestApp::spawn_with(|s| {
        s.webhooks.allowed_subnets = Some("127.0.0.0/8".into());
        crate::mail_sink::mail_to(s, smtp_port);
    })
    .await;
    drop(app.start_mail());
    let cipher = app::secrets::cipher(&app.settings, &app.db, false).await.expect("cipher");
    let creds = app::commands::seed_demo(&app.db, cipher.as_ref(), None).await.expect("seed");
    app::docs_search::ingest_embedded(&app.settings, &app.db).await.expect("ingest the documentation");
    let receiver = Receiver::start().await;
    let shots = if std::env::var_os("WMS_UPDATE_SCREENSHOTS").is_some() {
        root().join("docs/screenshots")
    } else {
        root().join("target/screenshots")
    };
    run_script(
        "settings_browser.py",
        &[
            ("WMS_BASE_URL", app.address.clone()),
            ("WMS_EMAIL", creds.email.expect("email")),
            ("WMS_PASSWORD", creds.password.expect("password")),
            ("WMS_HOOK_URL", receiver.url("/wms-hook")),
            ("WMS_SCREENSHOTS", shots.display().to_string()),
            ("WMS_SMTP_PORT", smtp_port.to_string()),
        ],
    )
    .await;
    // The test event and its retry reached the receiver, signed.
    let received = receiver.received();
    assert!(received.len() >= 2, "deliveries received: {}", received.len());
    assert!(received.iter().all(|r| !r.header("webhook-signature").is_empty()));
}
