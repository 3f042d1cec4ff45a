//! The adaptive delivery pace against real receivers that take only so much at once: every
//! event arrives, few attempts are refused once the pace has settled, also with two instances
//! sharing the destination.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use domain::webhooks::EventType;
use serde_json::json;

use crate::helpers::TestApp;
use crate::webhooks_delivery::{destination, emit, loopback};
use crate::webhooks_receiver::{Answer, Receiver};

/// What a receiver taking `limit` at a time (40 ms each, 429 with `Retry-After: 1` beyond)
/// saw while `instances` instances delivered `per_second` events a second for `seconds`.
struct Run {
    events: usize,
    delivered: usize,
    attempts_after_5s: usize,
    refused_after_5s: usize,
    max_pace: i64,
    /// The most requests the receiver had at once (refused ones included) from 5 s in.
    peak_after_5s: usize,
}

async fn narrow_receiver(instances: usize, limit: usize, per_second: usize, seconds: usize) -> Run {
    let app = TestApp::spawn_with(|s| {
        loopback(s);
        s.webhooks.poll_interval_ms = 20;
    })
    .await;
    let receiver = Receiver::start().await;
    receiver.answer_always(Answer { delay: Duration::from_millis(40), ..Answer::status(204) });
    receiver
        .limit_concurrency(limit, Answer { headers: vec![("retry-after".into(), "1".into())], ..Answer::status(429) });
    let (ws, key) = app.advanced_with_key().await;
    let (id, _) = destination(&app, &key, &receiver.url("/"), &["message.created"]).await;
    let workers: Vec<_> = (0..instances)
        .map(|_| {
            app::webhooks::start(
                &app.settings,
                app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
            )
        })
        .collect();
    let events = per_second * seconds;
    let started = Instant::now();
    let mut max_pace = 0;
    for i in 0..events {
        emit(&app, ws.id, EventType::MessageCreated, json!({"id": i})).await;
        let due = started + Duration::from_secs_f64((i + 1) as f64 / per_second as f64);
        tokio::time::sleep_until(due.into()).await;
        if i + 1 == 5 * per_second {
            receiver.reset_max_concurrent();
        }
        if i % per_second == 0 {
            let stats = app.get_json(&format!("/v1/webhooks/{id}/stats"), &key).await.1;
            max_pace = max_pace.max(stats["pace"]["max_in_flight"].as_i64().unwrap_or(0));
        }
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    let delivered = loop {
        let ok: HashSet<String> =
            receiver.received().iter().filter(|r| r.status == 204).map(|r| r.header("webhook-id").to_owned()).collect();
        if ok.len() >= events || Instant::now() > deadline {
            break ok.len();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for w in workers {
        w.stop(Duration::from_secs(5)).await;
    }
    let got = receiver.received();
    let first = got.first().map_or(started, |r| r.at);
    let settled: Vec<_> = got.iter().filter(|r| r.at >= first + Duration::from_secs(5)).collect();
    let refused = settled.iter().filter(|r| r.status == 429).count();
    let peak_after_5s = receiver.max_concurrent();
    let (_, failed) = app.get_json(&format!("/v1/webhooks/{id}/stats"), &key).await;
    assert_eq!(failed["exhausted"], 0, "no event given up: {failed}");
    Run { events, delivered, attempts_after_5s: settled.len(), refused_after_5s: refused, max_pace, peak_after_5s }
}

#[tokio::test]
async fn a_receiver_taking_8_at_a_time_gets_every_event_with_under_5_percent_refused() {
    let run = narrow_receiver(1, 8, 100, 8).await;
    assert_eq!(run.delivered, run.events, "every event arrived");
    let share = run.refused_after_5s as f64 / run.attempts_after_5s.max(1) as f64;
    assert!(share < 0.05, "{} of {} attempts refused after 5 s", run.refused_after_5s, run.attempts_after_5s);
    assert!(run.max_pace >= 2, "the pace is visible in the stats: {}", run.max_pace);
}

// Until the pace cut only the binding limit, this starved: every probe above the receiver's 4
// held the whole destination for the `Retry-After` and halved the rate, and ~100 of the 400
// events waited more than 30 s (docs/webhooks.md, "Delivery pace").
#[tokio::test]
async fn two_instances_delivering_to_one_narrow_receiver_stay_within_it() {
    let limit = 4;
    let run = narrow_receiver(2, limit, 50, 8).await;
    assert_eq!(run.delivered, run.events, "every event arrived");
    let share = run.refused_after_5s as f64 / run.attempts_after_5s.max(1) as f64;
    assert!(share < 0.05, "{} of {} attempts refused after 5 s", run.refused_after_5s, run.attempts_after_5s);
    // The shared pace probes one above the receiver's capacity and halves on its 429
    // (docs/webhooks.md, "Delivery pace"): two instances together are one sender, never two.
    assert!(
        run.peak_after_5s <= limit + 1,
        "the two instances had {} requests at the receiver at once (it takes {limit})",
        run.peak_after_5s
    );
}
