//! The snooze timer: a due snooze opens its thread once, within 5 s, whatever the number of
//! instances and across a restart; its scan reads an index.

use std::time::{Duration, Instant};

use adapters_postgres::Db;
use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use serde_json::json;

use super::{new_thread, patch, thread, thread_events};
use crate::helpers::TestApp;

#[tokio::test]
async fn a_due_snooze_opens_once_with_two_instances_and_a_restart_between() {
    let app = TestApp::spawn().await;
    let second = app.spawn_instance();
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let mut ids = Vec::new();
    for n in 0..12 {
        ids.push(new_thread(&app, &key, ch, &format!("+1415555{:04}", 100 + n)).await);
    }
    let due = time::OffsetDateTime::now_utc() + time::Duration::seconds(3);
    let until = due.format(&time::format_description::well_known::Rfc3339).expect("format");
    for (n, id) in ids.iter().enumerate() {
        // Half through each instance: the timer is the row, whoever wrote it.
        let base = if n % 2 == 0 { app.address.clone() } else { second.clone() };
        let res = app
            .client
            .patch(format!("{base}/v1/threads/{id}"))
            .bearer_auth(&key)
            .json(&json!({"status": "snoozed", "snoozed_until": until}))
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), 200);
    }
    // Two instances' timers on pools of their own; the first one restarts before the time comes.
    let url = app.database.url.clone();
    let other = Db::new(&url, 4, Duration::from_secs(5)).expect("pool");
    let first = app::lifecycle::start(&app.db);
    let second_timer = app::lifecycle::start(&other);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    first.abort();
    let restarted_db = Db::new(&url, 4, Duration::from_secs(5)).expect("pool");
    let restarted = app::lifecycle::start(&restarted_db);

    let started = Instant::now();
    loop {
        let mut open = 0;
        for id in &ids {
            if thread(&app, &key, *id).await["status"] == "open" {
                open += 1;
            }
        }
        if open == ids.len() {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(12), "only {open} of {} open", ids.len());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let late = time::OffsetDateTime::now_utc() - due;
    assert!(late < time::Duration::seconds(5), "opened {late} after the time");
    // A few more passes of both timers change nothing more.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    second_timer.abort();
    restarted.abort();
    for id in &ids {
        let t = thread(&app, &key, *id).await;
        assert_eq!((&t["status_reason"], &t["snoozed_until"]), (&json!("snooze_expired"), &serde_json::Value::Null));
        let expired = thread_events(&app, *id)
            .await
            .into_iter()
            .filter(|(ty, d)| ty == "thread.status_changed" && d["status_reason"] == "snooze_expired")
            .count();
        assert_eq!(expired, 1, "thread {id}");
    }
}

#[tokio::test]
async fn a_snooze_until_the_contact_writes_never_expires_and_a_resnooze_moves_the_time() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let forever = new_thread(&app, &key, ch, "+14155550123").await;
    let later = new_thread(&app, &key, ch, "+14155550124").await;
    assert_eq!(patch(&app, &key, &format!("/v1/threads/{forever}"), json!({"status": "snoozed"})).await.status(), 200);
    let until = (time::OffsetDateTime::now_utc() + time::Duration::seconds(1))
        .format(&time::format_description::well_known::Rfc3339)
        .expect("format");
    let path = format!("/v1/threads/{later}");
    assert_eq!(patch(&app, &key, &path, json!({"status": "snoozed", "snoozed_until": until})).await.status(), 200);
    let until = (time::OffsetDateTime::now_utc() + time::Duration::days(1))
        .replace_nanosecond(0)
        .expect("whole seconds")
        .format(&time::format_description::well_known::Rfc3339)
        .expect("format");
    assert_eq!(patch(&app, &key, &path, json!({"status": "snoozed", "snoozed_until": until})).await.status(), 200);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let pass = app::lifecycle::run_once(&app.db).await.expect("pass");
    assert_eq!(pass.reopened, 0);
    assert_eq!(thread(&app, &key, forever).await["status"], "snoozed");
    assert_eq!(thread(&app, &key, later).await["snoozed_until"], json!(until));
}

#[derive(QueryableByName)]
struct Plan {
    #[diesel(sql_type = Text)]
    #[diesel(column_name = "QUERY PLAN")]
    plan: String,
}

#[tokio::test]
async fn the_snooze_scan_reads_its_index_not_the_threads() {
    let app = TestApp::spawn().await;
    let (ws, _) = app.advanced_with_key().await;
    let mut conn = app.db.conn().await.expect("conn");
    for sql in [
        "INSERT INTO channels (workspace_id, channel_type, display_name, identifier, status)
         VALUES ($1, 'whatsapp', 'Scan', '+14155550100', 'active')",
        "INSERT INTO contacts (workspace_id, phone) VALUES ($1, '+14155550199')",
        // 50,000 threads, 50 of them snoozed until a time.
        "INSERT INTO threads (workspace_id, contact_id, channel_id, status, snoozed_until)
         SELECT $1, (SELECT id FROM contacts WHERE workspace_id = $1), (SELECT id FROM channels WHERE workspace_id = $1),
                CASE WHEN n % 1000 = 0 THEN 'snoozed' WHEN n % 3 = 0 THEN 'resolved' ELSE 'open' END,
                CASE WHEN n % 1000 = 0 THEN now() + make_interval(secs => n) END
         FROM generate_series(1, 50000) AS n",
    ] {
        diesel::sql_query(sql).bind::<BigInt, _>(ws.id).execute(&mut conn).await.expect(sql);
    }
    diesel::sql_query("ANALYZE threads").execute(&mut conn).await.expect("analyze");
    let sql =
        adapters_postgres::assignment::SNOOZE_DUE_SQL.replace("$1", "now() + interval '1 day'").replace("$2", "100");
    let plan: Vec<Plan> = diesel::sql_query(format!("EXPLAIN {sql}")).load(&mut conn).await.expect("explain");
    let plan: Vec<String> = plan.into_iter().map(|p| p.plan).collect();
    let text = plan.join("\n");
    assert!(text.contains("threads_snooze_due_idx"), "{text}");
    assert!(!text.contains("Seq Scan"), "{text}");
}
