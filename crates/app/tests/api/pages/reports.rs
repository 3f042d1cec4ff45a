//! `/settings/workspace/reports`: conversations built with known times (each contact wrote a known
//! time ago and is answered now) show the figures the REST report gives, the first response times
//! in the right buckets of the distribution, another grouping, and a CSV equal to
//! `/v1/reports/conversations.csv`; bad input is named beside its field; only admins see it. The
//! same page in headless Chromium at the end.

use reqwest::Method;
use serde_json::json;
use time::{Duration, OffsetDateTime};

use super::*;
use crate::assistant_helpers::sql_json;
use crate::reports::reply;

/// The buckets of the page, shortest first.
const BUCKETS: [&str; 7] = ["<1m", "1–5m", "5–15m", "15–60m", "1–4h", "4–24h", ">24h"];

/// A workspace whose contacts wrote 20 s, 3 min, 30 min, 2 h, 3 h and 30 h ago (and again an hour
/// ago) and got a first answer from the admin now, and one more that an AI agent answered after
/// 10 min.
struct Built {
    ws: TestWorkspace,
    key: String,
    /// Members' first responses per bucket.
    human: [i64; 7],
    /// AI agents' first responses per bucket.
    ai: [i64; 7],
}

async fn conversations_with_known_times(app: &TestApp) -> Built {
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550100", "active").await;
    let bot = sql_json(
        app,
        "WITH a AS (INSERT INTO ai_agents (workspace_id, name, status) VALUES ($1, 'Bot', 'active') RETURNING id)
         SELECT json_build_object('id', id)::text AS j FROM a",
        ws.id,
    )
    .await["id"]
        .as_i64()
        .expect("bot");
    let ago = [
        Duration::hours(30),
        Duration::hours(3),
        Duration::hours(2),
        Duration::minutes(30),
        Duration::minutes(3),
        Duration::seconds(20),
    ];
    for (i, d) in ago.iter().enumerate() {
        let contact = format!("+491510000000{i}");
        app.contact_wrote_at(ch, &contact, OffsetDateTime::now_utc() - *d).await;
        if *d > Duration::hours(24) {
            // Writing again an hour ago keeps the cycle and opens WhatsApp's 24-hour window.
            app.contact_wrote_at(ch, &contact, OffsetDateTime::now_utc() - Duration::hours(1)).await;
        }
        reply(app, &key, ch, &contact, json!({"type": "user", "id": ws.admin_id})).await;
    }
    app.contact_wrote_at(ch, "+4915100000099", OffsetDateTime::now_utc() - Duration::minutes(10)).await;
    reply(app, &key, ch, "+4915100000099", json!({"type": "ai_agent", "id": bot})).await;
    Built { ws, key, human: [1, 1, 0, 1, 2, 0, 1], ai: [0, 0, 1, 0, 0, 0, 0] }
}

/// `GET /v1/reports/conversations.csv?{query}` as text.
async fn rest_csv(app: &TestApp, key: &str, query: &str) -> String {
    let res =
        app.authed(Method::GET, &format!("/v1/reports/conversations.csv?{query}"), key).send().await.expect("csv");
    assert_eq!(res.status(), 200);
    res.text().await.expect("text")
}

fn escaped(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The text after `marker` up to the next `<`.
fn after(html: &str, marker: &str) -> String {
    let at = html.find(marker).unwrap_or_else(|| panic!("{marker} in {html}")) + marker.len();
    html[at..].split('<').next().unwrap_or("").to_owned()
}

fn summary_figure(html: &str, figure: &str) -> i64 {
    after(html, &format!("data-figure=\"{figure}\"><div class=\"value\">")).parse().expect("a number")
}

fn bucket_counts(html: &str) -> ([i64; 7], [i64; 7]) {
    let mut human = [0; 7];
    let mut ai = [0; 7];
    for (i, b) in BUCKETS.iter().enumerate() {
        let row = &html[html.find(&format!("data-bucket=\"{}\"", escaped(b))).expect("bucket row")..];
        human[i] = after(row, "class=\"num human\">").parse().expect("members");
        ai[i] = after(row, "class=\"num ai\">").parse().expect("ai");
    }
    (human, ai)
}

#[tokio::test]
async fn the_report_page_shows_the_reports_figures_the_distribution_another_grouping_and_the_csv() {
    let app = TestApp::spawn().await;
    let built = conversations_with_known_times(&app).await;
    let b = sign_in(&app, &built.ws).await;
    let page = b.get(&app, "/settings/workspace/reports").await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.expect("html");
    assert!(html.contains("href=\"/settings/workspace/reports\" aria-current=\"page\""), "linked from the navigation");

    // The summary is the REST report's.
    let (_, rest) = app.get_json("/v1/reports/conversations", &built.key).await;
    let g = &rest["groups"][0];
    assert_eq!(g["conversations"], 7);
    for figure in ["conversations", "incoming_messages", "outgoing_messages", "resolutions", "sla_hit", "sla_missed"] {
        let want = figure.strip_prefix("sla_").map_or(&g[figure], |outcome| &g["sla"][outcome]);
        assert_eq!(Some(summary_figure(&html, figure)), want.as_i64(), "{figure}");
    }
    let count = after(&html, "<tr data-figure=\"first_response\"><td>First response (members)</td><td class=\"num\">");
    assert_eq!(count, "6");

    // The distribution: each first response in its bucket, members and AI agents apart.
    assert_eq!(bucket_counts(&html), (built.human, built.ai));
    assert!(html.contains("id=\"distribution-chart\""), "the histogram is drawn");
    assert!(html.contains("<title>1–4h: 2 first responses by members, 0 by AI agents</title>"), "{html}");

    // Per member: the admin answered six of them.
    let agents = b.get(&app, "/settings/workspace/reports?group_by=agent").await.text().await.expect("html");
    assert!(agents.contains(&format!("data-key=\"user:{}\"", built.ws.admin_id)), "{agents}");
    assert!(agents.contains("<option value=\"agent\" selected>"), "the picker keeps the grouping");
    assert!(agents.contains("id=\"groups-chart\""));
    assert_eq!(bucket_counts(&agents), (built.human, built.ai), "the distribution is the workspace's");

    // Business hours open only on a day outside the window: every duration is 0 and counted, so
    // the first bucket holds them all.
    let now = OffsetDateTime::now_utc();
    let closed_day = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
        [((now + Duration::days(3)).weekday().number_days_from_monday()) as usize];
    let res = app
        .authed(Method::PUT, "/v1/business-hours", &built.key)
        .json(&json!({"timezone": "UTC", "days": {closed_day: [["00:00", "24:00"]]}}))
        .send()
        .await
        .expect("hours");
    assert_eq!(res.status(), 200);
    let business = b.get(&app, "/settings/workspace/reports?business_hours=true").await.text().await.expect("html");
    assert!(business.contains("business hours only."));
    assert!(business.contains("name=\"business_hours\" value=\"true\" checked"), "the toggle stays on");
    assert_eq!(bucket_counts(&business), ([6, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0]));
    assert_eq!(
        bucket_counts(&b.get(&app, "/settings/workspace/reports").await.text().await.expect("html")).0,
        built.human
    );

    // The CSV link downloads what the REST CSV says, for the same selection.
    let link = "/settings/workspace/reports/conversations.csv?group_by=agent";
    assert!(agents.contains(&format!("href=\"{}\"", link.replace('&', "&amp;"))), "{agents}");
    let csv = b.get(&app, link).await;
    assert_eq!(csv.status(), StatusCode::OK);
    assert!(csv.headers()[CONTENT_TYPE].to_str().expect("type").starts_with("text/csv"));
    assert!(csv.headers()["content-disposition"].to_str().expect("name").contains("wms-conversations-agent-"));
    assert_eq!(csv.text().await.expect("text"), rest_csv(&app, &built.key, "group_by=agent").await);
}

#[tokio::test]
async fn bad_report_selections_are_named_beside_their_field() {
    let app = TestApp::spawn().await;
    let (ws, _) = app.advanced_with_key().await;
    let b = sign_in(&app, &ws).await;
    for (query, field) in [
        ("since=yesterday", "since"),
        ("since=2026-11-03&until=2026-11-02", "since"),
        ("until=2026-02-30", "until"),
        ("group_by=inbox", "group_by"),
        ("business_hours=sometimes", "business_hours"),
    ] {
        let res = b.get(&app, &format!("/settings/workspace/reports?{query}")).await;
        assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY, "{query}");
        let html = res.text().await.expect("html");
        assert!(html.contains(&format!("id=\"{field}-error\"")), "{query}: {html}");
        let csv = b.get(&app, &format!("/settings/workspace/reports/conversations.csv?{query}")).await;
        assert_eq!(csv.status(), StatusCode::BAD_REQUEST, "{query}");
    }
}

#[tokio::test]
async fn only_admins_of_the_workspace_see_its_report() {
    let app = TestApp::spawn().await;
    let built = conversations_with_known_times(&app).await;
    let ws = built.ws.clone();
    // Signed out: to the sign-in page.
    for path in ["/settings/workspace/reports", "/settings/workspace/reports/conversations.csv"] {
        let res = app.get(path).await;
        assert_eq!(res.status(), StatusCode::SEE_OTHER, "{path}");
        assert!(res.headers()[LOCATION].to_str().expect("location").starts_with("/login"));
    }
    // An agent: refused, and no link to it.
    let (email, password) = crate::credentials::add_member(&app, ws.id, "agent").await;
    let agent = sign_in(&app, &TestWorkspace { admin_email: email, admin_password: password, ..ws.clone() }).await;
    for path in ["/settings/workspace/reports", "/settings/workspace/reports/conversations.csv"] {
        assert_eq!(agent.get(&app, path).await.status(), StatusCode::FORBIDDEN, "{path}");
    }
    let nav = agent.get(&app, "/settings/workspace/teams").await.text().await.expect("html");
    assert!(!nav.contains("href=\"/settings/workspace/reports\""));
    // Another workspace's admin sees their own (empty) report.
    let other = app.advanced_with_key().await.0;
    let stranger = sign_in(&app, &other).await;
    let html = stranger.get(&app, "/settings/workspace/reports").await.text().await.expect("html");
    assert_eq!(summary_figure(&html, "conversations"), 0);
    assert_eq!(bucket_counts(&html), ([0; 7], [0; 7]));
    let csv = stranger.get(&app, "/settings/workspace/reports/conversations.csv").await.text().await.expect("csv");
    assert!(csv.ends_with(",,,0,0,0,0,0,,,,0,,,,0,,,,0,,,,0,0\r\n"), "{csv}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_and_sla_pages_work_in_headless_chromium() {
    let app = TestApp::spawn().await;
    let built = conversations_with_known_times(&app).await;
    let res = app.post_json("/v1/labels", &built.key, &json!({"name": "vip"})).await;
    assert_eq!(res.status(), 201);
    let agent_csv = rest_csv(&app, &built.key, "group_by=agent").await;
    let expected = json!({
        "conversations": 7,
        "human": built.human,
        "ai": built.ai,
        "buckets": BUCKETS,
        "admin_id": built.ws.admin_id,
        "agent_csv": agent_csv,
    });
    let shots = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/screenshots");
    crate::pages_browser::run_script(
        "reports_browser.py",
        &[
            ("WMS_BASE_URL", app.address.clone()),
            ("WMS_EMAIL", built.ws.admin_email.clone()),
            ("WMS_PASSWORD", built.ws.admin_password.clone()),
            ("WMS_EXPECTED", expected.to_string()),
            ("WMS_SCREENSHOTS", shots.display().to_string()),
        ],
    )
    .await;
    // What the browser did went through the services: the policy it kept and the hours it saved.
    let (_, policies) = app.get_json("/v1/sla-policies", &built.key).await;
    let kept = &policies["data"].as_array().expect("policies")[..];
    assert_eq!(kept.len(), 1, "{policies}");
    assert_eq!((kept[0]["name"].as_str(), kept[0]["first_response_seconds"].as_i64()), (Some("Gold"), Some(900)));
    assert_eq!(kept[0]["labels"], json!(["vip"]));
    let (_, hours) = app.get_json("/v1/business-hours", &built.key).await;
    assert_eq!(hours["timezone"], "Europe/Berlin");
    assert_eq!(hours["days"]["mon"], json!([["09:00", "17:00"]]));
    let audited = sql_json(
        &app,
        "SELECT json_agg(action ORDER BY id)::text AS j FROM audit_events WHERE workspace_id = $1 \
         AND (action LIKE 'sla_policy.%' OR action = 'business_hours.updated')",
        built.ws.id,
    )
    .await;
    assert_eq!(
        audited,
        json!([
            "sla_policy.created",
            "sla_policy.updated",
            "sla_policy.created",
            "sla_policy.deleted",
            "business_hours.updated"
        ])
    );
}
