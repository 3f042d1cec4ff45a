//! `/v1/business-hours` (docs/contract.md, "Conversation reports, business hours and SLAs"): none
//! set reads as every hour counting; a record is validated field by field, stored, read back and
//! audited; members read, admins and `settings:write` keys set.

use reqwest::Method;
use serde_json::{json, Value};

use crate::assistant_helpers::sql_json;
use crate::credentials::{add_member, admin_token, token_for};
use crate::helpers::{error_fields, problem, TestApp};

async fn put(app: &TestApp, key: &str, body: &Value) -> reqwest::Response {
    app.authed(Method::PUT, "/v1/business-hours", key).json(body).send().await.expect("request")
}

fn office() -> Value {
    json!({
        "timezone": "Europe/Berlin",
        "days": {"mon": [["09:00", "12:00"], ["13:00", "17:00"]], "fri": [["09:00", "15:00"]], "sat": []},
        "holidays": ["2026-12-25"]
    })
}

#[tokio::test]
async fn business_hours_are_set_read_back_and_audited() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let (status, none) = app.get_json("/v1/business-hours", &key).await;
    assert_eq!((status, none), (200, json!({"timezone": "UTC", "days": {}, "holidays": []})));

    let admin = admin_token(&app, &ws).await;
    let res = put(&app, &admin, &office()).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.expect("json"), office());
    let (status, read) = app.get_json("/v1/business-hours", &key).await;
    assert_eq!((status, read), (200, office()));

    let audit = sql_json(
        &app,
        "SELECT json_build_object('n', count(*), 'actor', max(actor_type), 'zone', max(details->>'timezone'))::text AS j
         FROM audit_events WHERE workspace_id = $1 AND action = 'business_hours.updated'",
        ws.id,
    )
    .await;
    assert_eq!(audit, json!({"n": 1, "actor": "user", "zone": "Europe/Berlin"}));
}

#[tokio::test]
async fn bad_business_hours_are_refused_naming_the_field() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let cases = [
        (json!({"timezone": "Mars/Olympus", "days": {}}), vec!["timezone"]),
        (json!({"timezone": "UTC", "days": {"mon": [["09:00", "12:00"], ["11:30", "14:00"]]}}), vec!["days"]),
        (json!({"timezone": "UTC", "days": {"tue": [["18:00", "08:00"]]}}), vec!["days"]),
        (json!({"timezone": "UTC", "days": {"someday": [["08:00", "09:00"]]}}), vec!["days"]),
        (json!({"timezone": "UTC", "days": {"wed": [["8am", "9am"]]}}), vec!["days"]),
        (json!({"timezone": "UTC", "holidays": ["2026-13-01"]}), vec!["holidays"]),
        (
            json!({"timezone": "Nowhere", "days": {"thu": [["10:00", "10:00"]]}, "holidays": ["soon"]}),
            vec!["timezone", "days", "holidays"],
        ),
    ];
    for (body, fields) in cases {
        let body_problem = problem(put(&app, &key, &body).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&body_problem), fields, "{body}");
    }
    let (_, still) = app.get_json("/v1/business-hours", &key).await;
    assert_eq!(still["days"], json!({}), "nothing was stored");
}

#[tokio::test]
async fn members_read_business_hours_and_only_admins_and_settings_keys_set_them() {
    let app = TestApp::spawn().await;
    let (ws, _) = app.advanced_with_key().await;
    let (email, password) = add_member(&app, ws.id, "agent").await;
    let agent = token_for(&app, &email, &password, Some(ws.id)).await;
    assert_eq!(app.get_json("/v1/business-hours", &agent).await.0, 200);
    problem(put(&app, &agent, &office()).await, 403, "forbidden").await;

    let reader = app.api_key_with_scopes(&ws, &["settings:read"]).await;
    assert_eq!(app.get_json("/v1/business-hours", &reader).await.0, 200);
    problem(put(&app, &reader, &office()).await, 403, "insufficient_scope").await;
    let writer = app.api_key_with_scopes(&ws, &["settings:write"]).await;
    assert_eq!(put(&app, &writer, &office()).await.status(), 200);
    assert_eq!(app.get_json("/v1/business-hours", &writer).await.0, 200, "settings:write implies settings:read");
    let other = app.api_key_with_scopes(&ws, &["threads:read"]).await;
    problem(
        app.authed(Method::GET, "/v1/business-hours", &other).send().await.expect("request"),
        403,
        "insufficient_scope",
    )
    .await;
}

/// A change of the hours waits for the transactions computing with the old ones (a send or an
/// inbound message recording its report fact), so its refiguring sees what they stored: before,
/// a fact committed just after the change's refiguring kept the old hours' business seconds for
/// good.
#[tokio::test]
async fn a_change_of_the_hours_waits_for_what_is_being_computed_with_the_old_ones() {
    use diesel_async::RunQueryDsl;
    let app = TestApp::spawn().await;
    let (ws, _) = app.advanced_with_key().await;
    let admin = admin_token(&app, &ws).await;
    let mut other = app.db.conn().await.expect("conn");
    diesel::sql_query("BEGIN").execute(&mut other).await.expect("begin");
    let old = adapters_postgres::business_hours::load(&mut other, domain::workspace::WorkspaceId(ws.id))
        .await
        .expect("hours");
    assert_eq!(old, domain::business_hours::BusinessHours::always());
    let change = tokio::spawn({
        let (url, admin) = (app.url("/v1/business-hours"), admin.clone());
        let client = app.client.clone();
        async move { client.put(url).bearer_auth(admin).json(&office()).send().await.expect("request").status() }
    });
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    assert!(!change.is_finished(), "the change did not wait for the transaction computing with the old hours");
    diesel::sql_query("COMMIT").execute(&mut other).await.expect("commit");
    let status = tokio::time::timeout(std::time::Duration::from_secs(5), change).await.expect("done").expect("task");
    assert_eq!(status, 200);
}

/// A change of the hours over a long history: the change answers, the figures stored before it
/// are refigured in batches of their own (within the request while it has time, then by the
/// reports' worker), the figures stored after it (already with the new hours) are left alone,
/// and a newer change starts the refiguring over.
#[tokio::test]
async fn a_change_over_a_long_history_is_refigured_in_batches_and_a_newer_one_starts_over() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let exec = |sql: &'static str| crate::assistant_helpers::exec(&app, sql, ws.id);
    exec(
        "INSERT INTO channels (workspace_id, channel_type, display_name, identifier, status)
         VALUES ($1, 'whatsapp', 'Line', '+14155550100', 'active')",
    )
    .await;
    exec("INSERT INTO contacts (workspace_id, phone) VALUES ($1, '+14155550199')").await;
    exec("INSERT INTO threads (workspace_id, contact_id, channel_id) SELECT $1, c.id, ch.id FROM contacts c, channels ch")
        .await;
    // 25,000 first responses of Monday 23 November 2026, 10:00 to 10:30 UTC: 1,800 business
    // seconds with the hours they were stored with (every hour counting).
    let facts = |business: i64| {
        format!(
            "INSERT INTO conversation_facts (workspace_id, thread_id, channel_id, kind, at, started_at, seconds, business_seconds)
             SELECT $1, t.id, t.channel_id, 4, '2026-11-23 10:30Z', '2026-11-23 10:00Z', 1800, {business}
             FROM threads t, generate_series(1, 25000)"
        )
    };
    crate::assistant_helpers::exec(&app, &facts(1800), ws.id).await;
    let last_before =
        sql_json(&app, "SELECT max(id)::text AS j FROM conversation_facts WHERE workspace_id = $1", ws.id).await;
    let late = json!({"timezone": "UTC", "days": {"mon": [["11:00", "17:00"]]}, "holidays": []});
    assert_eq!(put(&app, &key, &late).await.status(), 200);
    let up_to = sql_json(&app, "SELECT up_to::text AS j FROM business_hours_refigures WHERE workspace_id = $1", ws.id);
    assert_eq!(up_to.await, last_before, "the facts stored before the change are the refiguring's, and only they");
    // Stored after the change, with its hours: not the refiguring's.
    let after = facts(7).replace("generate_series(1, 25000)", "generate_series(1, 10)");
    crate::assistant_helpers::exec(&app, &after, ws.id).await;
    let figures = || async {
        sql_json(
            &app,
            "SELECT json_object_agg(business_seconds, n)::text AS j FROM (
                 SELECT business_seconds, count(*) AS n FROM conversation_facts WHERE workspace_id = $1 GROUP BY 1) f",
            ws.id,
        )
        .await
    };
    let worker = || async {
        for _ in 0..100 {
            app::report_rollup::run_once(&app.db).await.expect("worker pass");
            let left = sql_json(
                &app,
                "SELECT count(*)::text AS j FROM business_hours_refigures WHERE workspace_id = $1 AND after < up_to",
                ws.id,
            );
            if left.await == json!(0) {
                return;
            }
        }
        panic!("the refiguring never finished");
    };
    worker().await;
    assert_eq!(figures().await, json!({"0": 25000, "7": 10}));

    // Back to every Monday hour counting, then a newer change before the worker's turn: it
    // starts over, and every figure ends with the newest hours.
    let early = json!({"timezone": "UTC", "days": {"mon": [["09:00", "10:10"]]}, "holidays": []});
    let all_day = json!({"timezone": "UTC", "days": {"mon": [["00:00", "24:00"]]}, "holidays": []});
    assert_eq!(put(&app, &key, &all_day).await.status(), 200);
    // As if the worker had refigured the first thousand with those hours when the next change came.
    let midway = "UPDATE business_hours_refigures SET after = (SELECT min(id) + 999 FROM conversation_facts WHERE workspace_id = $1)
                  WHERE workspace_id = $1";
    crate::assistant_helpers::exec(&app, midway, ws.id).await;
    assert_eq!(put(&app, &key, &early).await.status(), 200);
    worker().await;
    assert_eq!(figures().await, json!({"600": 25010}));
}
