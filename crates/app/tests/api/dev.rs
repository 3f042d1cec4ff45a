//! `wms dev` from nothing: its own PostgreSQL cluster, migrations, demo data, the server; Ctrl-C
//! stops the server and then the cluster; the next run reuses the data.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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
    let pid = child.id().to_string();
    Command::new("kill").args(["-INT", &pid]).status().expect("kill");
    let out = child.wait_with_output().expect("wait");
    (out.status, String::from_utf8_lossy(&out.stdout).into_owned())
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
