//! The breach timer: a due target is missed within 5 s, announced once, whatever the number of
//! instances and across a restart.

use std::time::{Duration, Instant};

use adapters_postgres::Db;
use serde_json::json;

use super::{ago, at, breaches, contact_thread, policy, thread};
use crate::helpers::TestApp;

#[tokio::test]
async fn a_missed_first_response_is_announced_once_with_two_instances_and_a_restart_between() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    policy(&app, &key, json!({"name": "Hour", "first_response_seconds": 3600})).await;
    // Each contact wrote 3597 s ago (platform time): the first responses fall due in 3 s.
    let wrote = ago(3597);
    let due = wrote + time::Duration::hours(1);
    let mut ids = Vec::new();
    for n in 0..8 {
        ids.push(contact_thread(&app, &key, ch, &format!("+1415555{:04}", 200 + n), wrote).await);
    }
    for id in &ids {
        assert_eq!(at(&thread(&app, &key, *id).await["sla"]["first_response_due_at"]), due);
    }
    // Two instances' timers on pools of their own; the first restarts before the due time.
    let url = app.database.url.clone();
    let other = Db::new(&url, 4, Duration::from_secs(5)).expect("pool");
    let first = app::sla::start(&app.db);
    let second = app::sla::start(&other);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    first.abort();
    let restarted_db = Db::new(&url, 4, Duration::from_secs(5)).expect("pool");
    let restarted = app::sla::start(&restarted_db);

    let started = Instant::now();
    loop {
        let mut missed = 0;
        for id in &ids {
            if thread(&app, &key, *id).await["sla"]["status"] == "missed" {
                missed += 1;
            }
        }
        if missed == ids.len() {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(12), "only {missed} of {} missed", ids.len());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let late = time::OffsetDateTime::now_utc() - due;
    assert!(late < time::Duration::seconds(5), "missed {late} after the due time");
    // More passes of both timers announce nothing more.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    second.abort();
    restarted.abort();
    for id in &ids {
        let events = breaches(&app, *id).await;
        assert_eq!(events.len(), 1, "thread {id}");
        assert_eq!(events[0]["sla"]["breaches"], json!(["first_response"]));
        assert_eq!(events[0]["id"], json!(id));
    }
    assert_eq!(app::sla::run_once(&app.db).await.expect("pass"), 0, "nothing left due");
}

#[tokio::test]
async fn a_snoozed_thread_is_not_missed_while_its_clock_is_stopped() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    policy(&app, &key, json!({"name": "Hour", "first_response_seconds": 3600})).await;
    // 6 s left: room for a loaded machine between the message and the snooze.
    let id = contact_thread(&app, &key, ch, "+14155550123", ago(3594)).await;
    let due_before = at(&thread(&app, &key, id).await["sla"]["first_response_due_at"]);
    super::set_status(&app, &key, id, "snoozed").await;
    let snoozed_at = time::OffsetDateTime::now_utc();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(app::sla::run_once(&app.db).await.expect("pass"), 0);
    assert_eq!(thread(&app, &key, id).await["sla"]["status"], "active");
    super::set_status(&app, &key, id, "open").await;
    let reopened_at = time::OffsetDateTime::now_utc();
    // The due time moved by the stopped time (at least the 1.5 s slept, at most snooze to reopen).
    let due_after = at(&thread(&app, &key, id).await["sla"]["first_response_due_at"]);
    let moved = due_after - due_before;
    assert!(
        moved >= time::Duration::milliseconds(1500) && moved <= reopened_at - snoozed_at + time::Duration::seconds(1),
        "the due time moved by {moved}"
    );
    // Not missed before the moved due time; missed once it has passed.
    if time::OffsetDateTime::now_utc() < due_after - time::Duration::milliseconds(300) {
        assert_eq!(app::sla::run_once(&app.db).await.expect("pass"), 0, "missed before the moved due time");
    }
    let wait = due_after - time::OffsetDateTime::now_utc() + time::Duration::milliseconds(200);
    if wait.is_positive() {
        tokio::time::sleep(wait.unsigned_abs()).await;
    }
    app::sla::run_once(&app.db).await.expect("pass");
    assert_eq!(thread(&app, &key, id).await["sla"]["status"], "missed", "the time left runs out once open");
    assert_eq!(breaches(&app, id).await.len(), 1);
}
