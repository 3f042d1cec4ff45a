//! Request logs name the route pattern, never a path that holds a token (a log must not hand out access): the log lines
//! the real binary writes for an invitation link, a password-reset link and a query string that a
//! careless client filled with a key.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::helpers::TestApp;

#[tokio::test]
async fn request_logs_name_the_route_pattern_never_a_token_of_the_path_or_query() {
    let app = TestApp::spawn().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("port");
    let log_path = std::env::temp_dir().join(format!("wms-request-log-{}-{port}.log", std::process::id()));
    let log = std::fs::File::create(&log_path).expect("log file");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wms"));
    for (k, _) in std::env::vars() {
        if k.starts_with("WMS") || k == "DATABASE_URL" || k == "RUST_LOG" {
            cmd.env_remove(k);
        }
    }
    let mut child = cmd
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .env("DATABASE_URL", &app.database.url)
        .env("WMS__SECRETS__ENCRYPTION_KEY", app.settings.secrets.encryption_key.as_deref().unwrap_or(""))
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .stdin(Stdio::null())
        .spawn()
        .expect("serve");
    let base = format!("http://127.0.0.1:{port}");
    let mut up = false;
    for _ in 0..150 {
        if app.client.get(format!("{base}/healthz")).send().await.is_ok_and(|r| r.status().is_success()) {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let invitation = format!("wmsu_{}", "Inv1tat10nT0ken".repeat(3));
    let reset = format!("wmsu_{}", "Pa55w0rdReset".repeat(4));
    let queried = format!("wmsk_{}", "QueryStr1ngKey".repeat(3));
    for path in
        [format!("/invitations/{invitation}"), format!("/password-reset/{reset}"), format!("/healthz?key={queried}")]
    {
        let res = app.client.get(format!("{base}{path}")).send().await.expect("request");
        assert!(!res.status().is_server_error(), "{path}: {}", res.status());
    }
    // The last request's line is written once its answer is sent: give the writer a moment.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = child.kill();
    let _ = child.wait();
    let written = std::fs::read_to_string(&log_path).expect("log");
    let _ = std::fs::remove_file(&log_path);
    assert!(up, "the server never answered /healthz:\n{written}");
    for secret in [&invitation, &reset, &queried] {
        assert!(!written.contains(secret.as_str()), "a token reached the log:\n{written}");
    }
    assert!(written.contains("/invitations/{token}"), "the invitation's route pattern is logged:\n{written}");
    assert!(written.contains("/password-reset/{token}"), "the reset's route pattern is logged:\n{written}");
}
