//! `wms dev` from nothing: its own PostgreSQL cluster, migrations, demo data, the server; Ctrl-C
//! stops the server and then the cluster; the next run reuses the data.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use diesel_async::AsyncConnection;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("port")
}

fn start_dev(data_dir: &std::path::Path, port: u16) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wms"));
    for (k, _) in std::env::vars() {
        if k.starts_with("WMS") || k == "DATABASE_URL" {
            cmd.env_remove(k);
        }
    }
    cmd.args(["dev", "--bind", &format!("127.0.0.1:{port}")])
        .env("WMS__DEV__DATA_DIR", data_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start wms dev")
}

async fn wait_ready(client: &reqwest::Client, port: u16, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(r) = client.get(format!("http://127.0.0.1:{port}/readyz")).send().await {
            if r.status() == 200 {
                return;
            }
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("wms dev exited early with {status}");
        }
        assert!(Instant::now() < deadline, "wms dev did not become ready");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn interrupt(child: Child) -> (std::process::ExitStatus, String) {
    let (status, stdout, _) = interrupt_with_logs(child);
    (status, stdout)
}

/// Ctrl-C; the exit status, stdout and stderr (the logs).
fn interrupt_with_logs(child: Child) -> (std::process::ExitStatus, String, String) {
    let pid = child.id().to_string();
    Command::new("kill").args(["-INT", &pid]).status().expect("kill");
    let out = child.wait_with_output().expect("wait");
    (out.status, String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The API key `wms dev` printed.
fn printed_key(stdout: &str) -> String {
    let at = stdout.find("API key").expect("an API key line");
    stdout[at..].split_whitespace().nth(2).expect("the key").to_owned()
}

fn cluster_running(data_dir: &std::path::Path) -> bool {
    // postmaster.pid exists exactly while the server runs.
    data_dir.join("postgres/data/postmaster.pid").exists()
}

#[tokio::test]
async fn dev_runs_on_its_own_cluster_and_stops_it_on_ctrl_c() {
    let data_dir = std::env::temp_dir().join(format!("wms-dev-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data_dir);
    let client = reqwest::Client::new();

    let port = free_port();
    let mut child = start_dev(&data_dir, port);
    wait_ready(&client, port, &mut child).await;
    assert!(cluster_running(&data_dir));
    let (status, stdout) = interrupt(child);
    assert!(status.success(), "exit status {status}");
    assert!(stdout.contains("Admin") && stdout.contains("wmsk_"), "credentials printed: {stdout}");
    assert!(!cluster_running(&data_dir), "the cluster must stop with wms dev");
    let first: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data_dir.join("demo.json")).expect("demo.json")).expect("json");

    let port = free_port();
    let mut child = start_dev(&data_dir, port);
    wait_ready(&client, port, &mut child).await;
    let (status, stdout) = interrupt(child);
    assert!(status.success());
    assert!(!stdout.contains("seeding"), "second run must reuse the data: {stdout}");
    assert!(stdout.contains(first["email"].as_str().unwrap_or("?")));
    let _ = std::fs::remove_dir_all(&data_dir);
}

#[tokio::test]
async fn dev_keeps_its_demo_key_and_logs_quietly_and_plainly() {
    let data_dir = std::env::temp_dir().join(format!("wms-dev-key-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data_dir);
    let client = reqwest::Client::new();
    let (data_dir, client) = (&data_dir, &client);
    let run = |revoke: bool| async move {
        let port = free_port();
        let mut child = start_dev(data_dir, port);
        wait_ready(client, port, &mut child).await;
        let kept = std::fs::read_to_string(data_dir.join("demo-api-key")).expect("the key is kept");
        let res = client
            .get(format!("http://127.0.0.1:{port}/v1/channels"))
            .bearer_auth(kept.trim())
            .send()
            .await
            .expect("request");
        if revoke {
            let url = format!("postgres://postgres@/wms?host={}", data_dir.join("postgres/run").display());
            let mut conn = diesel_async::AsyncPgConnection::establish(&url).await.expect("connect");
            diesel_async::RunQueryDsl::execute(diesel::sql_query("UPDATE api_keys SET revoked_at = now()"), &mut conn)
                .await
                .expect("revoke");
        }
        let (status, stdout, stderr) = interrupt_with_logs(child);
        assert_eq!(res.status(), 200, "the kept key works");
        assert!(status.success(), "exit status {status}: {stderr}");
        // Logs go to a pipe here: no colour codes, no server NOTICE, and an honest stop.
        assert!(!stderr.contains('\u{1b}'), "ANSI escapes in piped logs: {stderr:?}");
        assert!(!stderr.contains("NOTICE"), "{stderr}");
        assert!(stderr.contains("shutting down") && !stderr.contains("forced"), "{stderr}");
        let printed = printed_key(&stdout);
        assert_eq!(printed, kept.trim());
        printed
    };
    let first = run(false).await;
    let second = run(true).await;
    assert!(first.starts_with("wmsk_"), "{first}");
    assert_eq!(first, second, "the second run shows the key of the first");
    // The second run's key was revoked meanwhile: the third mints a new one.
    let third = run(false).await;
    assert!(third.starts_with("wmsk_") && third != first, "{third}");
    let _ = std::fs::remove_dir_all(data_dir);
}

#[test]
fn dev_without_postgres_binaries_says_what_to_install() {
    let out = Command::new(env!("CARGO_BIN_EXE_wms"))
        .args(["dev", "--bind", "127.0.0.1:0"])
        .env_remove("DATABASE_URL")
        .env("WMS__DEV__POSTGRES_BIN_DIR", "/nonexistent")
        .env("WMS__DEV__DATA_DIR", std::env::temp_dir().join("wms-dev-nobin"))
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("apt-get install postgresql"), "{err}");
    assert!(!err.contains("panicked"));
}
