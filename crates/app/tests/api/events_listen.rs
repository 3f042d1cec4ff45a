//! `wms listen` against a real `wms serve`: it follows the events feed and forwards each event,
//! signed with the secret it prints, to a local receiver; killed and started again, it resumes
//! from its cursor without losing or repeating an event.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use domain::webhooks::signing::SigningSecret;

use crate::helpers::TestApp;
use crate::webhooks_receiver::{Received, Receiver};

fn wms() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wms"));
    for (k, _) in std::env::vars() {
        if k.starts_with("WMS") || k == "DATABASE_URL" {
            cmd.env_remove(k);
        }
    }
    cmd
}

/// `wms serve` on a free loopback port; returns it and its base URL once it answers.
pub(crate) async fn serve(app: &TestApp) -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let mut cmd = wms();
    cmd.args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .env("DATABASE_URL", &app.database.url)
        .env("WMS__SECRETS__ENCRYPTION_KEY", app.settings.secrets.encryption_key.as_deref().unwrap_or(""))
        .env("WMS__DATABASE__POOL_SIZE", "4")
        .env("WMS__HTTP__WORKERS", "1")
        .stdout(Stdio::null());
    if std::env::var_os("TEST_LOG").is_none() {
        cmd.stderr(Stdio::null());
    }
    let child = cmd.spawn().expect("start wms serve");
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !reqwest::get(format!("{base}/healthz")).await.is_ok_and(|r| r.status().as_u16() == 200) {
        assert!(Instant::now() < deadline, "wms serve did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (child, base)
}

/// `wms listen` with its stdout lines collected.
fn listen(base: &str, key: &str, to: &str, state: &std::path::Path) -> (Child, Arc<Mutex<Vec<String>>>) {
    let mut child = wms()
        .args(["listen", "--api-url", base, "--key", key, "--forward-to", to, "--poll-interval-ms", "100"])
        .arg("--state-file")
        .arg(state)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start wms listen");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let out = child.stdout.take().expect("stdout");
    let sink = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            sink.lock().expect("lock").push(line);
        }
    });
    (child, lines)
}

fn printed_secret(lines: &Mutex<Vec<String>>) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(s) =
            lines.lock().expect("lock").iter().find_map(|l| l.split_whitespace().find(|w| w.starts_with("whsec_")))
        {
            return s.to_owned();
        }
        assert!(Instant::now() < deadline, "wms listen printed no secret");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn ids(got: &[Received]) -> Vec<String> {
    got.iter().map(|r| r.header("webhook-id").to_owned()).collect()
}

#[tokio::test]
async fn listen_forwards_signed_events_and_resumes_after_a_kill_without_loss_or_repeat() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let receiver = Receiver::start().await;
    let (mut server, base) = serve(&app).await;
    let dir = std::env::temp_dir().join(format!("wms-listen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let state = dir.join(format!("{}.json", &key[key.len() - 8..]));

    let (mut first, lines) = listen(&base, &key, &receiver.url("/local"), &state);
    let secret = printed_secret(&lines);
    for i in 0..3 {
        app.channel(&key, "messenger", &format!("page-listen-{i}"), "active").await;
    }
    let got = receiver.wait_for(3, Duration::from_secs(30)).await;
    // A line per event with the local answer's status.
    let deadline = Instant::now() + Duration::from_secs(5);
    while lines.lock().expect("lock").iter().filter(|l| l.contains("channel.created")).count() < 3 {
        assert!(Instant::now() < deadline, "a line per event: {:?}", lines.lock().expect("lock"));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(lines
        .lock()
        .expect("lock")
        .iter()
        .filter(|l| l.contains("channel.created"))
        .all(|l| l.ends_with("-> 204")));
    std::thread::sleep(Duration::from_millis(300)); // its state written
    first.kill().expect("SIGKILL");
    let _ = first.wait();

    for i in 3..5 {
        app.channel(&key, "messenger", &format!("page-listen-{i}"), "active").await;
    }
    let (mut second, lines2) = listen(&base, &key, &receiver.url("/local"), &state);
    assert_eq!(printed_secret(&lines2), secret, "the same secret after a restart");
    let got = {
        let _ = got;
        receiver.wait_for(5, Duration::from_secs(30)).await
    };
    std::thread::sleep(Duration::from_millis(800)); // nothing more arrives
    let _ = second.kill();
    let _ = second.wait();
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);

    let all = receiver.received();
    assert_eq!(all.len(), 5, "each event exactly once: {:?}", ids(&all));
    assert_eq!(ids(&all).into_iter().collect::<HashSet<_>>().len(), 5);
    let feed = crate::events_helpers::feed(&app, &key).await;
    let feed_ids: Vec<&str> = feed.iter().filter_map(|e| e["id"].as_str()).collect();
    assert_eq!(ids(&all), feed_ids, "in feed order, under the event's id");
    let secret = SigningSecret::parse(&secret).expect("secret");
    // Byte for byte the feed record after its id: what a destination receives, nothing re-serialised.
    let raw = app.authed(reqwest::Method::GET, "/v1/events?limit=100", &key).send().await.expect("feed");
    let raw = raw.text().await.expect("text");
    for r in &all {
        let body = std::str::from_utf8(&r.body).expect("utf-8");
        let record = format!("{{\"id\":{},{}", serde_json::Value::from(r.header("webhook-id")), &body[1..]);
        assert!(raw.contains(&record), "{body} is not the feed record's bytes");
    }
    for r in &got {
        let ts: i64 = r.header("webhook-timestamp").parse().expect("ts");
        assert_eq!(r.header("webhook-signature"), secret.sign(r.header("webhook-id"), ts, &r.body));
        let body = r.json();
        assert_eq!(body["type"], "channel.created");
        assert!(body.get("id").is_none(), "the body a destination receives");
    }
}

#[test]
fn listen_refuses_bad_arguments_with_exit_code_2() {
    for (args, needle) in [
        (
            vec![
                "--api-url",
                "http://127.0.0.1:1",
                "--key",
                "wmsk_x",
                "--forward-to",
                "http://127.0.0.1:2",
                "--events",
                "nope",
            ],
            "--events",
        ),
        (vec!["--api-url", "not a url", "--key", "wmsk_x", "--forward-to", "http://127.0.0.1:2"], "--api-url"),
        (vec!["--api-url", "http://127.0.0.1:1", "--key", "wmsk_x", "--forward-to", "ftp://x"], "--forward-to"),
        (vec!["--api-url", "http://127.0.0.1:1", "--forward-to", "http://127.0.0.1:2"], "--key"),
    ] {
        let out = wms().arg("listen").args(&args).env_remove("WMS_API_KEY").output().expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
