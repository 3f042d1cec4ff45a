//! The webhook destination pages over HTTP (plain forms, no script needed, so no browser): the
//! replay form (replays exactly the missed events; bad input is explained and replays nothing),
//! the banner of an auto-disabled destination with its re-enable button, and the test-event type
//! selector (sends the chosen typed sample, signed, matching its schema).

use std::sync::Arc;

use domain::webhooks::EventType;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use serde_json::{json, Value};

use crate::helpers::TestApp;
use crate::pages::{csrf_of, sign_in, Browser};
use crate::webhooks_delivery::{destination, emit, loopback, one_at_a_time};
use crate::webhooks_receiver::{Answer, Receiver};

const PATH: &str = "/settings/integrations/webhooks";

/// Submits a page form; the page the redirect leads to, shown with the message left for it.
async fn submit(app: &TestApp, b: &Browser, path: &str, fields: &[(&str, &str)]) -> String {
    let res = b.post(app, path, fields, true).await;
    assert_eq!(res.status(), 303, "{path} {fields:?}: {}", res.status());
    let location = res.headers()[LOCATION].to_str().expect("location").to_owned();
    let flash = res
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("wms_flash="))
        .and_then(|v| v.split(';').next())
        .expect("a message for the next page")
        .to_owned();
    let page = app
        .client
        .get(app.url(&location))
        .header(COOKIE, format!("{}; {flash}", b.cookie))
        .send()
        .await
        .expect("request");
    assert_eq!(page.status(), 200, "{location}");
    page.text().await.expect("html")
}

/// The text of the page's message (`div.flash`).
fn flash_of(html: &str) -> String {
    let at = html.find("class=\"flash\"").expect("a message on the page");
    let text = &html[at..];
    let start = text.find('>').expect("tag") + 1;
    text[start..].split("</div>").next().expect("end").to_owned()
}

fn engine(app: &TestApp) -> Arc<domain::webhooks::delivery::DeliveryEngine> {
    app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock))
}

async fn deliveries(app: &TestApp, key: &str, id: i64) -> Vec<Value> {
    let (status, page) = app.get_json(&format!("/v1/webhooks/{id}/deliveries?limit=100"), key).await;
    assert_eq!(status, 200, "{page}");
    page["data"].as_array().cloned().expect("data")
}

#[tokio::test]
async fn the_replay_form_sends_exactly_the_missed_events_and_explains_bad_input() {
    let app = TestApp::spawn_with(one_at_a_time).await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let b = sign_in(&app, &ws).await;
    let start = time::OffsetDateTime::now_utc() - time::Duration::seconds(60);
    let (id, secret) = destination(&app, &key, &receiver.url("/r"), &["channel.created"]).await;
    let detail = format!("{PATH}/{id}");
    let engine = engine(&app);
    app.channel(&key, "messenger", "page-before", "active").await;
    assert_eq!(app::webhooks::run_once(&engine, 10).await.expect("run"), 1);

    let html = submit(&app, &b, &format!("{detail}/active"), &[("active", "false")]).await;
    assert!(flash_of(&html).contains("deactivated"), "{}", flash_of(&html));
    let mut missed = Vec::new();
    for i in 0..2 {
        missed.push(app.channel(&key, "messenger", &format!("page-missed-{i}"), "active").await);
    }
    let html = submit(&app, &b, &format!("{detail}/active"), &[("active", "true")]).await;
    assert!(flash_of(&html).contains("activated"), "{}", flash_of(&html));
    assert!(html.contains("id=\"replay-since\""), "the replay form is on the page");
    assert_eq!(app::webhooks::run_once(&engine, 10).await.expect("run"), 0, "nothing queued while inactive");

    // Bad input: the page says what is wrong in the form's words, and nothing is replayed.
    let since = start
        .format(time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]"))
        .expect("datetime-local");
    let earlier = (start - time::Duration::hours(1))
        .format(time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]"))
        .expect("datetime-local");
    for (fields, expected) in [
        (vec![("since", "")], "From is required"),
        (vec![("since", "yesterday")], "From must be a date and time"),
        (vec![("since", since.as_str()), ("until", earlier.as_str())], "Until must be after From"),
    ] {
        let html = submit(&app, &b, &format!("{detail}/replay"), &fields).await;
        let message = flash_of(&html);
        assert!(message.starts_with("Nothing replayed: ") && message.contains(expected), "{fields:?}: {message}");
        for (name, value) in &fields {
            assert!(html.contains(&format!("name=\"{name}\" value=\"{value}\"")), "{name} keeps what was typed");
        }
        assert_eq!(deliveries(&app, &key, id).await.len(), 1, "{fields:?}: nothing queued");
    }

    // The period since before the outage: exactly the two missed events, once, oldest first.
    let html = submit(&app, &b, &format!("{detail}/replay"), &[("since", &since), ("until", "")]).await;
    assert_eq!(flash_of(&html), "2 events queued for delivery, oldest first.");
    assert_eq!(app::webhooks::run_once(&engine, 10).await.expect("run"), 1);
    assert_eq!(app::webhooks::run_once(&engine, 10).await.expect("run"), 1);
    let html = submit(&app, &b, &format!("{detail}/replay"), &[("since", &since)]).await;
    assert!(flash_of(&html).starts_with("Nothing to replay"), "{}", flash_of(&html));
    let got = receiver.received();
    assert_eq!(got.len(), 3, "the first event and the two missed ones");
    let replayed: Vec<i64> = got[1..].iter().map(|r| r.json()["data"]["id"].as_i64().expect("id")).collect();
    assert_eq!(replayed, missed);
    let cases: Vec<(String, &crate::webhooks_receiver::Received)> = got.iter().map(|r| (secret.clone(), r)).collect();
    for v in crate::webhooks_verify::verify(&cases) {
        assert_eq!(v["ok"], true, "{v}");
    }
    // The log on the page lists them.
    let page = b.get(&app, &detail).await.text().await.expect("html");
    assert_eq!(page.matches("data-delivery-id=").count(), 3);
}

#[tokio::test]
async fn an_auto_disabled_destination_shows_a_banner_whose_button_re_enables_it() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    receiver.answer_always(Answer::status(410));
    let (ws, key) = app.advanced_with_key().await;
    let token = crate::credentials::admin_token(&app, &ws).await;
    let b = sign_in(&app, &ws).await;
    let (id, _) = destination(&app, &key, &receiver.url("/gone"), &["contact.created"]).await;
    let (healthy, _) = destination(&app, &key, &receiver.url("/fine"), &["contact.updated"]).await;
    let engine = engine(&app);
    emit(&app, ws.id, EventType::ContactCreated, json!({"id": 1})).await;
    app::webhooks::run_once(&engine, 10).await.expect("run");

    let list = b.get(&app, PATH).await.text().await.expect("html");
    let banner = format!("data-disabled-destination=\"{id}\"");
    assert!(list.contains(&banner), "a banner for the disabled destination");
    assert!(!list.contains(&format!("data-disabled-destination=\"{healthy}\"")), "none for the healthy one");
    let at = list.find(&banner).expect("banner");
    let text = &list[at..at + list[at..].find("</form>").expect("its form")];
    assert!(text.contains("410") && text.contains("Re-enable"), "the reason and the button: {text}");
    assert!(text.contains(&format!("action=\"{PATH}/{id}/active\"")), "{text}");

    // The button (the banner's own form, with its anti-forgery token).
    receiver.answer_always(Answer::status(200));
    let b = Browser { csrf: csrf_of(&list[at..]), ..b };
    let html = submit(&app, &b, &format!("{PATH}/{id}/active"), &[("active", "true")]).await;
    assert!(flash_of(&html).contains("activated"), "{}", flash_of(&html));
    assert!(!html.contains("wms deactivated this destination"), "no note on its page any more");
    let list = b.get(&app, PATH).await.text().await.expect("html");
    assert!(!list.contains("data-disabled-destination="), "the banner is gone");
    let (_, d) = app.get_json(&format!("/v1/webhooks/{id}"), &key).await;
    assert_eq!((d["active"].as_bool(), d["disabled_reason"].is_null()), (Some(true), true), "{d}");
    // Recorded as the change it is (the system's `webhook.disabled`, then the member's update).
    let (_, audit) = app.get_json("/v1/audit-events?action=webhook.updated&limit=100", &token).await;
    let records = audit["data"].as_array().expect("data");
    assert_eq!(records.len(), 1, "{audit}");
    let r = &records[0];
    assert_eq!((r["actor"]["type"].as_str(), r["actor"]["id"].as_i64()), (Some("user"), Some(ws.admin_id)), "{r}");
    assert_eq!((r["target"]["type"].as_str(), r["target"]["id"].as_i64()), (Some("webhook"), Some(id)), "{r}");
    assert_eq!(r["details"], json!({"fields": ["active"], "active": true}), "{r}");
    let (_, disabled) = app.get_json("/v1/audit-events?action=webhook.disabled", &token).await;
    assert_eq!(disabled["data"].as_array().map(Vec::len), Some(1), "{disabled}");
    // It receives events again.
    emit(&app, ws.id, EventType::ContactCreated, json!({"id": 2})).await;
    app::webhooks::run_once(&engine, 10).await.expect("run");
    let last = receiver.received().pop().expect("a delivery");
    assert_eq!((last.json()["type"].clone(), last.json()["data"]["id"].clone()), (json!("contact.created"), json!(2)));
}

#[tokio::test]
async fn the_test_event_selector_sends_a_signed_sample_of_the_chosen_type() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let b = sign_in(&app, &ws).await;
    let (id, secret) = destination(&app, &key, &receiver.url("/t"), &["message.created"]).await;
    let detail = format!("{PATH}/{id}");
    let page = b.get(&app, &detail).await.text().await.expect("html");
    for ev in EventType::CATALOG.iter().copied() {
        assert!(page.contains(&format!("<option value=\"{}\">", ev.as_str())), "{} offered", ev.as_str());
    }

    let validators = crate::events_helpers::webhook_validators(&app).await;
    for (chosen, expected) in
        [("message.created", "message.created"), ("contact.deleted", "contact.deleted"), ("", "webhook.test")]
    {
        let before = receiver.received().len();
        let html = submit(&app, &b, &format!("{detail}/test"), &[("event_type", chosen)]).await;
        let message = flash_of(&html);
        assert!(message.starts_with("Test event delivered: your endpoint answered HTTP 2"), "{chosen}: {message}");
        let got = receiver.received();
        assert_eq!(got.len(), before + 1, "{chosen}: one delivery");
        let r = got.last().expect("delivery");
        let body = r.json();
        assert_eq!(body["type"], expected, "{body}");
        assert_eq!(body["workspace_id"], ws.id, "{body}");
        if expected != "webhook.test" {
            crate::events_helpers::assert_valid(&validators, &body);
        }
        for v in crate::webhooks_verify::verify(&[(secret.clone(), r)]) {
            assert_eq!(v["ok"], true, "{chosen}: {v}");
        }
    }
    // An unknown type is refused on the page; nothing is sent.
    let before = receiver.received().len();
    let res = b.post(&app, &format!("{detail}/test"), &[("event_type", "message.exploded")], true).await;
    assert_eq!(res.status(), 400);
    assert!(res.text().await.expect("html").contains("message.exploded"));
    assert_eq!(receiver.received().len(), before);
    // Another workspace's member cannot send one.
    let (other, _) = app.advanced_with_key().await;
    let ob = sign_in(&app, &other).await;
    let res = ob.post(&app, &format!("{detail}/test"), &[("event_type", "message.created")], true).await;
    assert_eq!(res.status(), 404);
    assert_eq!(receiver.received().len(), before);
}

/// The destination's own caps hold for the page's test sends and retries too: beyond them the
/// page says which cap is full and when to try again, and nothing is sent.
#[tokio::test]
async fn the_page_says_when_a_destination_cap_keeps_a_test_send_or_retry_back() {
    let app = TestApp::spawn_with(loopback).await;
    let receiver = Receiver::start().await;
    let (ws, key) = app.advanced_with_key().await;
    let b = sign_in(&app, &ws).await;
    let (id, _) = destination(&app, &key, &receiver.url("/t"), &["message.created"]).await;
    let res = app
        .authed(reqwest::Method::PATCH, &format!("/v1/webhooks/{id}"), &key)
        .json(&json!({"rate_limit_per_second": 1}))
        .send()
        .await
        .expect("patch");
    assert_eq!(res.status(), 200);
    let detail = format!("{PATH}/{id}");
    let sent = flash_of(&submit(&app, &b, &format!("{detail}/test"), &[("event_type", "")]).await);
    assert!(sent.starts_with("Test event delivered"), "{sent}");
    let held = flash_of(&submit(&app, &b, &format!("{detail}/test"), &[("event_type", "")]).await);
    assert!(
        held.starts_with("Test event not sent: the destination is at its cap: its rate_limit_per_second (1)"),
        "{held}"
    );
    let (_, log) = app.get_json(&format!("/v1/webhooks/{id}/deliveries"), &key).await;
    let delivery = log["data"][0]["id"].as_i64().expect("the first test's delivery");
    let retried = flash_of(&submit(&app, &b, &format!("{detail}/deliveries/{delivery}/retry"), &[]).await);
    assert!(retried.starts_with(&format!("Delivery {delivery} not sent: the destination is at its cap")), "{retried}");
    assert_eq!(receiver.received().len(), 1, "nothing more was sent");
}

/// Posts a form of owned values.
async fn post_owned(
    app: &TestApp,
    b: &Browser,
    path: &str,
    fields: Vec<(&'static str, String)>,
    token: bool,
) -> reqwest::Response {
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    b.post(app, path, &fields, token).await
}

#[tokio::test]
async fn the_edit_form_sets_the_delivery_controls_and_explains_bad_input() {
    let app = TestApp::spawn_with(loopback).await;
    let (ws, key) = app.advanced_with_key().await;
    let b = sign_in(&app, &ws).await;
    let ch = app.channel(&key, "whatsapp", "+14155550123", "active").await.to_string();
    let (id, _) = destination(&app, &key, "http://127.0.0.1:9/h", &["message.created"]).await;
    let detail = format!("{PATH}/{id}");
    let page = b.get(&app, &detail).await.text().await.expect("html");
    for field in
        ["rate_limit_per_second", "max_in_flight", "headers", "filter_channel_ids", "filter_labels", "ordering"]
    {
        assert!(page.contains(&format!("name=\"{field}\"")), "the edit form has {field}");
    }
    let form = |rate: &'static str, headers: &'static str, channels: String| {
        vec![
            ("url", "http://127.0.0.1:9/h".to_owned()),
            ("platform", "custom".to_owned()),
            ("events", "message.created".to_owned()),
            ("rate_limit_per_second", rate.to_owned()),
            ("max_in_flight", "5".to_owned()),
            ("headers", headers.to_owned()),
            ("filter_channel_ids", channels),
            ("filter_labels", "vip, urgent".to_owned()),
            ("ordering", "per_thread".to_owned()),
        ]
    };
    let post = |fields: Vec<(&'static str, String)>, token: bool| post_owned(&app, &b, &detail, fields, token);

    // Without the anti-forgery token nothing changes.
    assert_eq!(post(form("50", "X-Api-Key: k_page", ch.clone()), false).await.status(), 403);
    // Bad input: 422, each error beside its field, what was typed kept, nothing saved.
    for (fields, error_id, expected) in [
        (form("0", "X-Api-Key: k_page", ch.clone()), "wh-rate-error", "The rate limit"),
        (form("many", "X-Api-Key: k_page", ch.clone()), "wh-rate-error", "whole number"),
        (form("50", "Host: evil.example", ch.clone()), "wh-headers-error", "Headers:"),
        (form("50", "just-a-value", ch.clone()), "wh-headers-error", "Name: value"),
        (
            form("50", "X-Api-Key: k_page", "999999".to_owned()),
            "wh-filter-channels-error",
            "not a channel of this workspace",
        ),
    ] {
        let res = post(fields.clone(), true).await;
        assert_eq!(res.status(), 422, "{fields:?}");
        let html = res.text().await.expect("html");
        let at = html.find(&format!("id=\"{error_id}\"")).unwrap_or_else(|| panic!("{error_id} for {fields:?}"));
        assert!(html[at..].split("</p>").next().is_some_and(|e| e.contains(expected)), "{fields:?}: {}", &html[at..]);
        let typed = &fields[3].1;
        assert!(html.contains(&format!("value=\"{typed}\"")), "what was typed stays: {typed}");
        let (_, got) = app.get_json(&format!("/v1/webhooks/{id}"), &key).await;
        assert_eq!((&got["rate_limit_per_second"], &got["headers"]), (&json!(null), &json!({})), "nothing saved");
    }

    // Good input: saved, answered by the API, and shown again in the form.
    let res = post(form("50", "X-Api-Key: k_page\nX-Tenant: t1", ch.clone()), true).await;
    assert_eq!(res.status(), 303);
    let (_, got) = app.get_json(&format!("/v1/webhooks/{id}"), &key).await;
    assert_eq!(got["rate_limit_per_second"], 50);
    assert_eq!(got["max_in_flight"], 5);
    assert_eq!(got["headers"], json!({"X-Api-Key": "k_page", "X-Tenant": "t1"}));
    assert_eq!(got["filter"], json!({"channel_ids": [ch.parse::<i64>().expect("id")], "labels": ["vip", "urgent"]}));
    assert_eq!(got["ordering"], "per_thread");
    let page = b.get(&app, &detail).await.text().await.expect("html");
    assert!(page.contains("X-Api-Key: k_page"), "the headers are in the form");
    assert!(page.contains("value=\"50\""), "the rate limit is in the form");
    assert!(page.contains("<option value=\"per_thread\" selected>"), "the ordering is selected");

    // Blank caps and filter clear them.
    let mut clear = form("", "", String::new());
    clear[4].1 = String::new();
    clear[7].1 = String::new();
    assert_eq!(post(clear, true).await.status(), 303);
    let (_, got) = app.get_json(&format!("/v1/webhooks/{id}"), &key).await;
    assert_eq!(
        (&got["rate_limit_per_second"], &got["max_in_flight"], &got["headers"], &got["filter"]),
        (&json!(null), &json!(null), &json!({}), &json!(null))
    );
}
