//! The events feed's horizon: only transactions that write events hold it back
//! (`docs/webhooks.md`, "The events feed"). A committed event shows within a second whatever else
//! stays open, here or in another database of the server, and nothing ever appears before a
//! position the feed handed out, however writers interleave.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::Value;

use crate::events_helpers::feed_from;
use crate::helpers::TestApp;

async fn sql(conn: &mut AsyncPgConnection, q: &str) {
    diesel::sql_query(q).execute(conn).await.unwrap_or_else(|e| panic!("{q}: {e}"));
}

/// An event written straight into the outbox (as the service's transactions do), in `conn`'s
/// transaction; its `webhook-id` is `msg_<tag>`.
async fn write_event(conn: &mut AsyncPgConnection, ws: i64, tag: &str) {
    sql(
        conn,
        &format!(
            "INSERT INTO webhook_events (workspace_id, event_type, message_id, payload)
             VALUES ({ws}, 'contact.updated', 'msg_{tag}', '{{\"type\":\"contact.updated\",\"data\":{{}}}}')"
        ),
    )
    .await;
}

/// The ids (`webhook-id`) of a list of feed records.
fn ids(events: &[Value]) -> Vec<String> {
    events.iter().map(|e| e["id"].as_str().expect("id").to_owned()).collect()
}

/// Polls the feed from `cursor` until an event with `webhook-id` `want` shows; how long it took.
async fn seen_within(app: &TestApp, key: &str, cursor: &str, want: &str, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        let (events, _) = feed_from(app, key, Some(cursor), "").await;
        if ids(&events).iter().any(|i| i == want) {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

#[tokio::test]
async fn idle_transactions_that_wrote_no_event_never_hold_the_feed_back() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let (_, start) = feed_from(&app, &key, None, "").await;

    // Left open for the whole test: one in another database of the server, one in wms's own
    // database that wrote something (a contact) but no event.
    let mut elsewhere = AsyncPgConnection::establish(&test_db::admin_url()).await.expect("another database");
    sql(&mut elsewhere, "BEGIN").await;
    sql(&mut elsewhere, "SELECT txid_current()").await;
    let mut here = AsyncPgConnection::establish(&app.database.url).await.expect("wms's database");
    sql(&mut here, "BEGIN").await;
    sql(&mut here, &format!("INSERT INTO contacts (workspace_id, name) VALUES ({}, 'Idle')", ws.id)).await;

    let mut writer = AsyncPgConnection::establish(&app.database.url).await.expect("writer");
    write_event(&mut writer, ws.id, "after_idle").await;
    let took = seen_within(&app, &key, &start, "msg_after_idle", Duration::from_secs(3)).await;
    assert!(took.is_some_and(|t| t < Duration::from_secs(1)), "shown within 1 s of its commit: {took:?}");

    // And through the service: a change made while both stay open.
    let channel = app.channel(&key, "messenger", "page-idle", "active").await;
    let start_wait = Instant::now();
    loop {
        let (events, _) = feed_from(&app, &key, Some(&start), "").await;
        if events.iter().any(|e| e["type"] == "channel.created" && e["data"]["id"] == channel) {
            break;
        }
        assert!(start_wait.elapsed() < Duration::from_secs(1), "channel.created within 1 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    sql(&mut elsewhere, "ROLLBACK").await;
    sql(&mut here, "ROLLBACK").await;
}

#[tokio::test]
async fn an_open_event_writer_holds_back_what_comes_after_it_and_nothing_is_skipped() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let (_, start) = feed_from(&app, &key, None, "").await;

    // A writer takes its event id first and stays open; a second one commits after it.
    let mut slow = AsyncPgConnection::establish(&app.database.url).await.expect("slow writer");
    sql(&mut slow, "BEGIN").await;
    write_event(&mut slow, ws.id, "slow").await;
    let mut quick = AsyncPgConnection::establish(&app.database.url).await.expect("quick writer");
    write_event(&mut quick, ws.id, "quick").await;

    // The quick one's event (after the slow one's id) waits: showing it would hand out a position
    // past the slow one's event.
    let (events, held) = feed_from(&app, &key, Some(&start), "").await;
    assert!(ids(&events).is_empty(), "nothing past an open writer's floor: {events:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (events, held) = feed_from(&app, &key, Some(&held), "").await;
    assert!(ids(&events).is_empty(), "still held back: {events:?}");

    sql(&mut slow, "COMMIT").await;
    let (events, _) = feed_from(&app, &key, Some(&held), "").await;
    assert_eq!(ids(&events), ["msg_slow", "msg_quick"], "both, in id order, from the cursor handed out before");

    // A writer that rolls back leaves a gap that holds nothing back once it has ended.
    let (_, end) = feed_from(&app, &key, None, "").await;
    let mut gone = AsyncPgConnection::establish(&app.database.url).await.expect("rolled back writer");
    sql(&mut gone, "BEGIN").await;
    write_event(&mut gone, ws.id, "gone").await;
    sql(&mut gone, "ROLLBACK").await;
    write_event(&mut quick, ws.id, "after_gap").await;
    let (events, _) = feed_from(&app, &key, Some(&end), "").await;
    assert_eq!(ids(&events), ["msg_after_gap"]);
}

#[tokio::test]
async fn a_follower_of_the_feed_misses_no_event_of_concurrent_writers() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let (_, start) = feed_from(&app, &key, None, "").await;
    let done = Arc::new(AtomicBool::new(false));

    // Eight writers, each committing (or rolling back) 25 transactions of one to three events,
    // holding some open a few milliseconds so commits land out of id order.
    let mut writers = Vec::new();
    for w in 0..8u32 {
        let url = app.database.url.clone();
        writers.push(tokio::spawn(async move {
            let mut conn = AsyncPgConnection::establish(&url).await.expect("writer");
            let mut committed = Vec::new();
            for t in 0..25u32 {
                sql(&mut conn, "BEGIN").await;
                let n = 1 + (w + t) % 3;
                let tags: Vec<String> = (0..n).map(|i| format!("w{w}t{t}e{i}")).collect();
                for tag in &tags {
                    write_event(&mut conn, ws.id, tag).await;
                }
                tokio::time::sleep(Duration::from_millis(u64::from((w * 7 + t * 3) % 11))).await;
                if (w + t) % 9 == 0 {
                    sql(&mut conn, "ROLLBACK").await;
                } else {
                    sql(&mut conn, "COMMIT").await;
                    committed.extend(tags.into_iter().map(|t| format!("msg_{t}")));
                }
            }
            committed
        }));
    }

    // The follower: one page at a time from the cursor it was given, as `wms listen` does.
    let follower = {
        let (base, key, done) = (app.address.clone(), key.clone(), done.clone());
        let client = app.client.clone();
        tokio::spawn(async move {
            let mut cursor = start;
            let mut seen: Vec<String> = Vec::new();
            let mut quiet_after_done = 0;
            loop {
                let res = client
                    .get(format!("{base}/v1/events?limit=7&cursor={cursor}"))
                    .bearer_auth(&key)
                    .send()
                    .await
                    .expect("feed");
                assert_eq!(res.status(), 200);
                let page: Value = res.json().await.expect("json");
                let data = page["data"].as_array().cloned().unwrap_or_default();
                cursor = page["next_cursor"].as_str().expect("cursor").to_owned();
                if data.is_empty() {
                    if AtomicBool::load(&done, Ordering::SeqCst) {
                        quiet_after_done += 1;
                        if quiet_after_done > 2 {
                            return seen;
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                seen.extend(ids(&data));
            }
        })
    };

    let mut committed = BTreeSet::new();
    for w in writers {
        committed.extend(w.await.expect("writer"));
    }
    done.store(true, Ordering::SeqCst);
    let seen = tokio::time::timeout(Duration::from_secs(30), follower).await.expect("follower ends").expect("follower");

    let unique: BTreeSet<String> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "no event twice");
    let missed: Vec<&String> = committed.difference(&unique).collect();
    assert!(missed.is_empty(), "the follower missed {} committed events: {missed:?}", missed.len());
    assert_eq!(unique, committed, "and saw nothing that was rolled back");
    assert!(committed.len() > 300, "enough traffic to interleave: {}", committed.len());
}
