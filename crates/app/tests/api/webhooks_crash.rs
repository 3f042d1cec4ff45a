//! Crash safety: the real `wms serve` binary is killed with SIGKILL while it is delivering; a new
//! one is started and every event reaches the receiver (duplicates allowed, losses not).

use std::collections::HashSet;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use domain::webhooks::EventType;
use serde_json::json;

use crate::helpers::TestApp;
use crate::webhooks_delivery::{destination, emit, loopback};
use crate::webhooks_receiver::{Answer, Receiver};

fn serve(app: &TestApp) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wms"));
    cmd.args(["serve", "--bind", "127.0.0.1:0"]);
    for (k, _) in std::env::vars() {
        if k.starts_with("WMS") || k == "DATABASE_URL" {
            cmd.env_remove(k);
        }
    }
    if app.bouncer.is_some() {
        cmd.env("WMS__DATABASE__PGBOUNCER", "true").env("WMS__DATABASE__MIGRATE_URL", &app.database.url);
    }
    cmd.env("DATABASE_URL", app.settings.database.url.as_deref().unwrap_or(&app.database.url))
        .env("WMS__SECRETS__ENCRYPTION_KEY", app.settings.secrets.encryption_key.as_deref().unwrap_or(""))
        .env("WMS__WEBHOOKS__ALLOWED_SUBNETS", "127.0.0.0/8")
        .env("WMS__WEBHOOKS__TIMEOUT_SECS", "5")
        .env("WMS__WEBHOOKS__LEASE_SECS", "60")
        .env("WMS__WEBHOOKS__POLL_INTERVAL_MS", "50")
        .env("WMS__DATABASE__POOL_SIZE", "4")
        .env("WMS__HTTP__WORKERS", "1")
        .stdout(Stdio::null());
    if std::env::var_os("TEST_LOG").is_none() {
        cmd.stderr(Stdio::null());
    }
    cmd.spawn().expect("start wms serve")
}

#[tokio::test]
async fn sigkill_mid_delivery_loses_no_event() {
    sigkill_loses_nothing(TestApp::spawn_with(loopback).await).await;
}

/// The same with both processes behind PgBouncer in transaction pooling (`test_db::pgbouncer`):
/// the killed process's transactions end with its client connections, and nothing of its session
/// stays on the server connections the next one gets.
#[tokio::test]
async fn sigkill_behind_pgbouncer_loses_no_event() {
    let app = sigkill_loses_nothing(TestApp::spawn_behind_pgbouncer(6, loopback).await).await;
    app.assert_transaction_pooling(6);
}

async fn sigkill_loses_nothing(app: TestApp) -> TestApp {
    const EVENTS: usize = 200;
    let receiver = Receiver::start().await;
    // Slow answers keep several deliveries in flight when the process dies.
    receiver.answer_always(Answer { delay: Duration::from_millis(100), ..Answer::status(204) });
    let (ws, key) = app.advanced_with_key().await;
    destination(&app, &key, &receiver.url("/"), &["message.created"]).await;
    for i in 0..EVENTS {
        emit(&app, ws.id, EventType::MessageCreated, json!({"id": i})).await;
    }

    let mut first = serve(&app);
    receiver.wait_for(10, Duration::from_secs(30)).await;
    first.kill().expect("SIGKILL"); // Child::kill is SIGKILL on Unix.
    let _ = first.wait();
    let at_kill = receiver.received().len();
    assert!(at_kill < EVENTS, "killed mid-delivery ({at_kill} delivered)");

    // The killed instance's claims are not waited out (`webhooks.lease_secs`): its heartbeat
    // stopped, so they expire within `webhooks.claim_lease_secs` (5) and the new instance sends
    // them; everything arrives within 10 s of its start.
    let mut second = serve(&app);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let ids = loop {
        let ids: HashSet<String> = receiver.received().iter().map(|r| r.header("webhook-id").to_owned()).collect();
        if ids.len() >= EVENTS || std::time::Instant::now() > deadline {
            break ids;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let _ = second.kill();
    let _ = second.wait();
    assert_eq!(ids.len(), EVENTS, "every event arrived within 10 s (received {} requests)", receiver.received().len());
    assert!(receiver.received().len() >= EVENTS);
    app
}
