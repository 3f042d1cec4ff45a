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

/// A send or status change holding a thread's conversation cycle, about to settle its SLA, while
/// the timer finds that SLA due: the timer leaves the thread to a later pass instead of waiting
/// (the two waited for each other in opposite orders, and the send answered 500); the breach is
/// still announced once, on the next pass.
#[tokio::test]
async fn the_timer_never_waits_for_a_cycle_another_transaction_holds() {
    timer_leaves_a_thread_whose_row_is_held("SELECT 1 FROM conversation_cycles WHERE thread_id = $id FOR UPDATE").await;
}

/// The same for the thread's row, which an inbound message and `PATCH /v1/threads/:id` lock
/// before the SLA row: the timer's recorded miss (a report fact referencing the thread) waited
/// for it while holding the SLA row.
#[tokio::test]
async fn the_timer_never_waits_for_a_thread_another_transaction_holds() {
    timer_leaves_a_thread_whose_row_is_held("SELECT 1 FROM threads WHERE id = $id FOR UPDATE").await;
}

async fn timer_leaves_a_thread_whose_row_is_held(held: &str) {
    use diesel_async::RunQueryDsl;
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    policy(&app, &key, json!({"name": "Hour", "first_response_seconds": 3600})).await;
    // Due a second after it starts (one already past its due time is missed as it starts).
    let id = contact_thread(&app, &key, ch, "+14155550123", ago(3599)).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut other = app.db.conn().await.expect("conn");
    let lock = |sql: &str| diesel::sql_query(sql.replace("$id", &id.to_string()));
    lock("BEGIN").execute(&mut other).await.expect("begin");
    lock(held).execute(&mut other).await.expect("held");
    let pass = tokio::time::timeout(Duration::from_secs(3), app::sla::run_once(&app.db)).await;
    pass.expect("the timer waited for the held row").expect("pass");
    assert!(breaches(&app, id).await.is_empty(), "left to a later pass");
    // The holder then reaches the SLA row, which the timer no longer holds.
    let sla = "SET LOCAL lock_timeout = '2s'; SELECT 1 FROM thread_slas WHERE thread_id = $id FOR UPDATE";
    for statement in sla.split("; ") {
        lock(statement).execute(&mut other).await.expect("the SLA row is free");
    }
    lock("COMMIT").execute(&mut other).await.expect("commit");
    app::sla::run_once(&app.db).await.expect("pass");
    assert_eq!(breaches(&app, id).await.len(), 1);
    assert_eq!(thread(&app, &key, id).await["sla"]["status"], "missed");
}
