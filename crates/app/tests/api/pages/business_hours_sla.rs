//! `/settings/workspace/business-hours` and `/settings/workspace/sla-policies`: admins set the
//! hours and create, change and delete policies with the forms, through the services of the REST
//! API (same validation, same audit entries); a bad value is named beside its field and changes
//! nothing; forms without the anti-forgery token are refused; agents read the hours only; another
//! workspace's policy is not found.

use serde_json::{json, Value};

use super::*;
use crate::assistant_helpers::sql_json;

const HOURS: &str = "/settings/workspace/business-hours";
const POLICIES: &str = "/settings/workspace/sla-policies";

async fn audit_actions(app: &TestApp, ws: i64) -> Value {
    sql_json(
        app,
        "SELECT coalesce(json_agg(action ORDER BY id), '[]')::text AS j FROM audit_events WHERE workspace_id = $1 \
         AND (action LIKE 'sla_policy.%' OR action = 'business_hours.updated')",
        ws,
    )
    .await
}

fn policy_form<'a>(name: &'a str, first: &'a str, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut f = vec![
        ("name", name),
        ("first_response_seconds", first),
        ("next_response_seconds", ""),
        ("resolution_seconds", ""),
        ("labels", ""),
    ];
    for (k, v) in extra {
        match f.iter_mut().find(|(name, _)| name == k) {
            Some(field) => field.1 = v,
            None => f.push((k, v)),
        }
    }
    f
}

#[tokio::test]
async fn an_admin_sets_the_business_hours_and_bad_values_are_named() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let b = sign_in(&app, &ws).await;
    let page = b.get(&app, HOURS).await.text().await.expect("html");
    assert!(page.contains("id=\"timezone\"") && page.contains("value=\"UTC\""), "{page}");

    let saved = b
        .post(
            &app,
            HOURS,
            &[
                ("timezone", "Europe/Berlin"),
                ("days.mon", "09:00-12:00, 13:00-17:00"),
                ("days.sat", "10:00 - 14:00"),
                ("holidays", "2026-12-24\n2026-12-25"),
            ],
            true,
        )
        .await;
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);
    assert_eq!(saved.headers()[LOCATION], HOURS);
    let (_, record) = app.get_json("/v1/business-hours", &key).await;
    assert_eq!(
        record,
        json!({"timezone": "Europe/Berlin", "days": {"mon": [["09:00", "12:00"], ["13:00", "17:00"]], "sat": [["10:00", "14:00"]]},
               "holidays": ["2026-12-24", "2026-12-25"]})
    );
    let shown = b.get(&app, HOURS).await.text().await.expect("html");
    assert!(shown.contains("value=\"09:00-12:00, 13:00-17:00\""), "{shown}");
    assert_eq!(audit_actions(&app, ws.id).await, json!(["business_hours.updated"]));

    for (fields, error_id) in [
        (&[("timezone", "Mars/Olympus")][..], "timezone-error"),
        (&[("timezone", "UTC"), ("days.tue", "9to5")][..], "days-error"),
        (&[("timezone", "UTC"), ("days.tue", "17:00-09:00")][..], "days-error"),
        (&[("timezone", "UTC"), ("holidays", "Christmas")][..], "holidays-error"),
        (&[][..], "timezone-error"),
    ] {
        let res = b.post(&app, HOURS, fields, true).await;
        assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY, "{fields:?}");
        let html = res.text().await.expect("html");
        assert!(html.contains(&format!("id=\"{error_id}\"")), "{fields:?}: {html}");
    }
    let res = b.post(&app, HOURS, &[("timezone", "UTC")], false).await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN, "no anti-forgery token");
    assert_eq!(app.get_json("/v1/business-hours", &key).await.1, record, "nothing changed");
    assert_eq!(audit_actions(&app, ws.id).await, json!(["business_hours.updated"]));
}

#[tokio::test]
async fn an_admin_creates_changes_and_deletes_sla_policies_from_the_page() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550100", "active").await;
    assert_eq!(app.post_json("/v1/labels", &key, &json!({"name": "vip"})).await.status(), 201);
    let b = sign_in(&app, &ws).await;
    let page = b.get(&app, POLICIES).await.text().await.expect("html");
    assert!(page.contains("No SLA policies yet.") && page.contains(&format!("value=\"{ch}\"")), "{page}");

    let channel = ch.to_string();
    let created = b
        .post(
            &app,
            POLICIES,
            &policy_form(
                "Gold",
                "15m",
                &[
                    ("resolution_seconds", "2d"),
                    ("business_hours", "true"),
                    ("channel_ids", &channel),
                    ("labels", "vip"),
                ],
            ),
            true,
        )
        .await;
    assert_eq!(created.status(), StatusCode::SEE_OTHER);
    let (_, list) = app.get_json("/v1/sla-policies", &key).await;
    let p = &list["data"][0];
    let id = p["id"].as_i64().expect("id");
    assert_eq!(
        (&p["name"], &p["first_response_seconds"], &p["next_response_seconds"], &p["resolution_seconds"]),
        (&json!("Gold"), &json!(900), &Value::Null, &json!(172_800))
    );
    assert_eq!((&p["business_hours"], &p["channel_ids"], &p["labels"]), (&json!(true), &json!([ch]), &json!(["vip"])));
    let shown = b.get(&app, POLICIES).await.text().await.expect("html");
    assert!(shown.contains("first response 15m, resolution 2d; business hours only"), "{shown}");

    // The edit form holds every field: clearing a target removes it, unchecking clears channels.
    let path = format!("{POLICIES}/{id}");
    let saved = b.post(&app, &path, &policy_form("Gold+", "", &[("next_response_seconds", "90")]), true).await;
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);
    let (_, list) = app.get_json("/v1/sla-policies", &key).await;
    let p = &list["data"][0];
    assert_eq!(
        (&p["name"], &p["first_response_seconds"], &p["next_response_seconds"]),
        (&json!("Gold+"), &Value::Null, &json!(90))
    );
    assert_eq!((&p["business_hours"], &p["channel_ids"], &p["labels"]), (&json!(false), &json!([]), &json!([])));

    // Bad values: named beside the field of the form they came from, nothing changes.
    for (form_path, fields, error_id) in [
        (POLICIES.to_owned(), policy_form("", "15m", &[]), "new-name-error".to_owned()),
        (POLICIES.to_owned(), policy_form("X", "soon", &[]), "new-first_response_seconds-error".to_owned()),
        (POLICIES.to_owned(), policy_form("X", "", &[]), "new-first_response_seconds-error".to_owned()),
        (POLICIES.to_owned(), policy_form("X", "0", &[]), "new-first_response_seconds-error".to_owned()),
        (POLICIES.to_owned(), policy_form("X", "2m", &[("labels", "nope")]), "new-labels-error".to_owned()),
        (POLICIES.to_owned(), policy_form("X", "2m", &[("channel_ids", "999999")]), "new-channel_ids-error".to_owned()),
        (path.clone(), policy_form("Gold+", "", &[]), format!("policy-{id}-first_response_seconds-error")),
        (path.clone(), policy_form("Gold+", "400d", &[]), format!("policy-{id}-first_response_seconds-error")),
        (POLICIES.to_owned(), vec![], "new-name-error".to_owned()),
    ] {
        let res = b.post(&app, &form_path, &fields, true).await;
        assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY, "{fields:?}");
        let html = res.text().await.expect("html");
        assert!(html.contains(&format!("id=\"{error_id}\"")), "{fields:?}: {html}");
    }
    let res = b.post(&app, POLICIES, &policy_form("Sneaky", "1m", &[]), false).await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN, "no anti-forgery token");
    let res = b.post(&app, &format!("{path}/delete"), &[], false).await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN, "no anti-forgery token");
    assert_eq!(app.get_json("/v1/sla-policies", &key).await.1["data"].as_array().map(Vec::len), Some(1));

    // Another workspace's admin finds no such policy.
    let other = app.advanced_with_key().await.0;
    let stranger = sign_in(&app, &other).await;
    assert_eq!(stranger.post(&app, &path, &policy_form("Mine", "1m", &[]), true).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(stranger.post(&app, &format!("{path}/delete"), &[], true).await.status(), StatusCode::NOT_FOUND);
    assert!(!stranger.get(&app, POLICIES).await.text().await.expect("html").contains("Gold+"));

    let deleted = b.post(&app, &format!("{path}/delete"), &[], true).await;
    assert_eq!(deleted.status(), StatusCode::SEE_OTHER);
    assert_eq!(app.get_json("/v1/sla-policies", &key).await.1["data"], json!([]));
    assert_eq!(
        audit_actions(&app, ws.id).await,
        json!(["sla_policy.created", "sla_policy.updated", "sla_policy.deleted"])
    );
}

#[tokio::test]
async fn agents_read_the_hours_and_nothing_else_and_visitors_sign_in() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let res = app.post_json("/v1/sla-policies", &key, &json!({"name": "Gold", "first_response_seconds": 60})).await;
    let id = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    for path in [HOURS, POLICIES] {
        let res = app.get(path).await;
        assert_eq!(res.status(), StatusCode::SEE_OTHER, "{path}");
        assert!(res.headers()[LOCATION].to_str().expect("location").starts_with("/login"));
    }
    let (email, password) = crate::credentials::add_member(&app, ws.id, "agent").await;
    let agent = sign_in(&app, &TestWorkspace { admin_email: email, admin_password: password, ..ws.clone() }).await;
    let html = agent.get(&app, HOURS).await.text().await.expect("html");
    assert!(
        html.contains("every hour counts") && !html.contains("action=\"/settings/workspace/business-hours\""),
        "{html}"
    );
    assert!(
        html.contains("href=\"/settings/workspace/business-hours\"")
            && !html.contains("href=\"/settings/workspace/sla-policies\"")
    );
    assert_eq!(agent.post(&app, HOURS, &[("timezone", "UTC")], true).await.status(), StatusCode::FORBIDDEN);
    assert_eq!(agent.get(&app, POLICIES).await.status(), StatusCode::FORBIDDEN);
    let path = format!("{POLICIES}/{id}");
    for p in [POLICIES.to_owned(), path.clone(), format!("{path}/delete")] {
        assert_eq!(
            agent.post(&app, &p, &policy_form("Mine", "1m", &[]), true).await.status(),
            StatusCode::FORBIDDEN,
            "{p}"
        );
    }
    assert_eq!(app.get_json("/v1/sla-policies", &key).await.1["data"][0]["name"], "Gold");
    assert_eq!(audit_actions(&app, ws.id).await, json!(["sla_policy.created"]));
}
