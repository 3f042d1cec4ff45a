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

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python of the test virtualenv with Playwright, and Chromium at /usr/bin/chromium,
/// installing either when missing (the reports page's browser test too).
pub fn python() -> PathBuf {
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
    let python = python();
    let script = root().join("crates/app/tests/py/settings_browser.py");
    let mut cmd = tokio::process::Command::new(python);
    cmd.arg(script)
        .env("WMS_BASE_URL", &app.address)
        .env("WMS_EMAIL", creds.email.expect("email"))
        .env("WMS_PASSWORD", creds.password.expect("password"))
        .env("WMS_HOOK_URL", receiver.url("/wms-hook"))
        .env("WMS_SCREENSHOTS", &shots)
        .env("WMS_SMTP_PORT", smtp_port.to_string())
        .kill_on_drop(true);
    let out = tokio::time::timeout(std::time::Duration::from_secs(240), cmd.output())
        .await
        .expect("the browser run took over 4 minutes")
        .expect("run the browser script");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "browser run failed\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("{\"ok\": true}"), "{stdout}");
    // The test event and its retry reached the receiver, signed.
    let received = receiver.received();
    assert!(received.len() >= 2, "deliveries received: {}", received.len());
    assert!(received.iter().all(|r| !r.header("webhook-signature").is_empty()));
}
