//! Due times on the thread: the first matching policy by id, counted from the message's platform
//! time; responses, the clock stopped while snoozed or pending, hit and missed.

use serde_json::{json, Value};
use time::Duration;

use super::{ago, at, breaches, contact_thread, policy, reply, set_status, thread};
use crate::helpers::TestApp;

#[tokio::test]
async fn a_cycle_takes_the_first_matching_policy_and_counts_from_the_contacts_message() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let other = app.channel(&key, "whatsapp", "+14155550102", "active").await;
    policy(&app, &key, json!({"name": "Elsewhere", "first_response_seconds": 60, "channel_ids": [other]})).await;
    let applies =
        policy(&app, &key, json!({"name": "All", "first_response_seconds": 3600, "resolution_seconds": 86400})).await;
    policy(&app, &key, json!({"name": "Later", "first_response_seconds": 5})).await;
    let wrote = ago(600);
    let id = contact_thread(&app, &key, ch, "+14155550123", wrote).await;
    let sla = thread(&app, &key, id).await["sla"].clone();
    assert_eq!(sla["policy_id"], applies["id"]);
    assert_eq!(at(&sla["first_response_due_at"]), wrote + Duration::hours(1));
    assert_eq!(at(&sla["resolution_due_at"]), wrote + Duration::days(1));
    assert_eq!(
        (&sla["next_response_due_at"], &sla["status"], &sla["breaches"]),
        (&Value::Null, &json!("active"), &json!([]))
    );
    // A reply by a member meets the first response; the resolution still runs.
    reply(&app, &key, ch, id, ws.admin_id).await;
    assert_eq!(thread(&app, &key, id).await["sla"]["status"], "active");
    set_status(&app, &key, id, "resolved").await;
    let done = thread(&app, &key, id).await;
    assert_eq!((&done["sla"]["status"], &done["sla"]["breaches"]), (&json!("hit"), &json!([])));
    assert!(breaches(&app, id).await.is_empty());
    // The contact writes again: a new cycle, counted from that message.
    let again = ago(30);
    app.contact_wrote_at(ch, "+14155550123", again).await;
    let sla = thread(&app, &key, id).await["sla"].clone();
    assert_eq!((at(&sla["first_response_due_at"]), &sla["status"]), (again + Duration::hours(1), &json!("active")));
}

#[tokio::test]
async fn a_thread_without_a_matching_policy_has_no_sla_and_an_api_key_send_is_no_response() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let bare = contact_thread(&app, &key, ch, "+14155550123", ago(60)).await;
    assert_eq!(thread(&app, &key, bare).await["sla"], Value::Null, "no policy yet");
    policy(&app, &key, json!({"name": "Fast", "first_response_seconds": 3600})).await;
    let id = contact_thread(&app, &key, ch, "+14155550124", ago(60)).await;
    let body = json!({"channel_id": ch, "thread_id": id, "content": "Automated notice"});
    assert_eq!(app.post_json("/v1/messages", &key, &body).await.status(), 201);
    assert_eq!(thread(&app, &key, id).await["sla"]["status"], "active", "a key's own send is an automation");
}

#[tokio::test]
async fn the_clock_stops_while_snoozed_or_pending_and_the_due_times_move_by_the_stopped_time() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    policy(&app, &key, json!({"name": "All", "first_response_seconds": 3600, "resolution_seconds": 7200})).await;
    let wrote = ago(10);
    let id = contact_thread(&app, &key, ch, "+14155550123", wrote).await;
    let started = std::time::Instant::now();
    set_status(&app, &key, id, "snoozed").await;
    let stopped = thread(&app, &key, id).await["sla"].clone();
    assert_eq!(at(&stopped["first_response_due_at"]), wrote + Duration::hours(1), "no move until the clock runs");
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    set_status(&app, &key, id, "pending").await;
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    set_status(&app, &key, id, "open").await;
    let elapsed = Duration::try_from(started.elapsed()).expect("duration");
    let sla = thread(&app, &key, id).await["sla"].clone();
    let moved = at(&sla["first_response_due_at"]) - (wrote + Duration::hours(1));
    assert!(moved >= Duration::seconds(2) && moved <= elapsed, "moved {moved} of {elapsed}");
    assert_eq!(at(&sla["resolution_due_at"]) - (wrote + Duration::hours(2)), moved, "both by the same time");
    // The contact's message reopens a pending thread: its clock runs again from then.
    set_status(&app, &key, id, "pending").await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    app.contact_wrote_at(ch, "+14155550123", ago(0)).await;
    let after = thread(&app, &key, id).await;
    assert_eq!(after["status"], "open");
    assert!(at(&after["sla"]["first_response_due_at"]) - at(&sla["first_response_due_at"]) >= Duration::seconds(1));
}

#[tokio::test]
async fn a_late_response_misses_and_the_next_response_is_due_after_the_contacts_next_message() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    policy(&app, &key, json!({"name": "Tight", "first_response_seconds": 60, "next_response_seconds": 600})).await;
    // The contact wrote two minutes ago: the first response is already late when the message
    // arrives, and that is announced at once.
    let id = contact_thread(&app, &key, ch, "+14155550123", ago(120)).await;
    let missed = thread(&app, &key, id).await["sla"].clone();
    assert_eq!((&missed["status"], &missed["breaches"]), (&json!("missed"), &json!(["first_response"])));
    assert_eq!(breaches(&app, id).await.len(), 1);
    reply(&app, &key, ch, id, ws.admin_id).await;
    let wrote = ago(5);
    app.contact_wrote_at(ch, "+14155550123", wrote).await;
    let sla = thread(&app, &key, id).await["sla"].clone();
    assert_eq!(at(&sla["next_response_due_at"]), wrote + Duration::minutes(10));
    reply(&app, &key, ch, id, ws.admin_id).await;
    let sla = thread(&app, &key, id).await["sla"].clone();
    assert_eq!((&sla["next_response_due_at"], &sla["breaches"]), (&Value::Null, &json!(["first_response"])));
    let events = breaches(&app, id).await;
    assert_eq!(events.len(), 1, "one event per breach");
    assert_eq!(events[0]["sla"]["breaches"], json!(["first_response"]));
}

#[tokio::test]
async fn a_first_response_in_time_is_a_hit() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    policy(&app, &key, json!({"name": "Fast", "first_response_seconds": 3600})).await;
    let id = contact_thread(&app, &key, ch, "+14155550123", ago(60)).await;
    reply(&app, &key, ch, id, ws.admin_id).await;
    let sla = thread(&app, &key, id).await["sla"].clone();
    assert_eq!((&sla["status"], &sla["breaches"]), (&json!("hit"), &json!([])));
}

#[tokio::test]
async fn a_business_hours_policy_counts_only_the_workspaces_business_hours() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let other = app.channel(&key, "whatsapp", "+14155550102", "active").await;
    // Open only tomorrow (UTC), 09:00 to 17:00: everything before is outside business hours.
    let tomorrow = (time::OffsetDateTime::now_utc() + Duration::days(1)).date();
    let day =
        ["mon", "tue", "wed", "thu", "fri", "sat", "sun"][usize::from(tomorrow.weekday().number_days_from_monday())];
    let hours = json!({"timezone": "UTC", "days": {day: [["09:00", "17:00"]]}});
    let res = app.authed(reqwest::Method::PUT, "/v1/business-hours", &key).json(&hours).send().await.expect("request");
    assert_eq!(res.status(), 200, "{:?}", res.text().await);
    policy(
        &app,
        &key,
        json!({"name": "Office", "first_response_seconds": 3600, "resolution_seconds": 36000,
                              "business_hours": true, "channel_ids": [ch]}),
    )
    .await;
    policy(&app, &key, json!({"name": "Wall", "first_response_seconds": 3600})).await;
    let wrote = ago(60);
    let id = contact_thread(&app, &key, ch, "+14155550123", wrote).await;
    let sla = thread(&app, &key, id).await["sla"].clone();
    let opens = tomorrow.with_hms(9, 0, 0).expect("time").assume_utc();
    assert_eq!(at(&sla["first_response_due_at"]), opens + Duration::hours(1));
    // Ten business hours: tomorrow's eight, then two more a week later.
    assert_eq!(at(&sla["resolution_due_at"]), opens + Duration::days(7) + Duration::hours(2));
    let wall = contact_thread(&app, &key, other, "+14155550124", wrote).await;
    assert_eq!(at(&thread(&app, &key, wall).await["sla"]["first_response_due_at"]), wrote + Duration::hours(1));
}

#[tokio::test]
async fn the_conversation_report_counts_each_cycles_sla_once_as_hit_or_missed() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    policy(&app, &key, json!({"name": "Fast", "first_response_seconds": 600})).await;
    let hit = contact_thread(&app, &key, ch, "+14155550123", ago(60)).await;
    reply(&app, &key, ch, hit, ws.admin_id).await;
    let missed = contact_thread(&app, &key, ch, "+14155550124", ago(900)).await;
    reply(&app, &key, ch, missed, ws.admin_id).await;
    assert_eq!(thread(&app, &key, hit).await["sla"]["status"], json!("hit"));
    assert_eq!(thread(&app, &key, missed).await["sla"]["status"], json!("missed"));
    let res = app.authed(reqwest::Method::GET, "/v1/reports/conversations", &key).send().await.expect("request");
    assert_eq!(res.status(), 200);
    let report: Value = res.json().await.expect("json");
    assert_eq!(report["groups"][0]["sla"], json!({"hit": 1, "missed": 1}), "{report}");
}
