//! Expensive reads are counted (`docs/rate-limit.md`): the settings pages, the settings API and
//! the CSV exports count in the member's hourly window like `/v1`.

use domain::workspace::PlanTier;

use crate::credentials::{admin_token, channels, header};
use crate::helpers::{problem, TestApp};

#[tokio::test]
async fn settings_pages_the_settings_api_and_exports_count_in_the_members_window() {
    let app = TestApp::spawn_with(|s| s.rate_limit.requests_per_hour = 4).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let token = admin_token(&app, &ws).await;
    // Signing in is not counted; the page it then reads is: 3 left.
    let browser = crate::pages::sign_in(&app, &ws).await;
    let keys_api = format!("/api/workspaces/{}/api-keys", ws.id);
    let csv = "/analytics/top-countries.csv?channel=all&range=90d";

    let res = channels(&app, &token).await;
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("2"), "/v1 shares the window");
    let res = app.client.get(app.url(&keys_api)).bearer_auth(&token).send().await.expect("request");
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("1"), "the settings API counts");
    assert_eq!(header(&res, "ratelimit-policy").as_deref(), Some(r#""hourly";q=4;w=3600"#));
    let res = browser.get(&app, csv).await;
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("0"), "an export counts");

    // The window is full: every surface refuses, with Retry-After, and runs nothing.
    let res = browser.get(&app, csv).await;
    assert_eq!(res.status(), 429);
    assert!(header(&res, "retry-after").is_some());
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("0"));
    let res = browser.get(&app, "/settings/workspace/api-keys").await;
    assert_eq!(res.status(), 429, "a page");
    assert!(header(&res, "retry-after").is_some());
    let res = app.client.get(app.url(&keys_api)).bearer_auth(&token).send().await.expect("request");
    assert!(header(&res, "retry-after").is_some());
    problem(res, 429, "rate_limited").await;
    problem(channels(&app, &token).await, 429, "rate_limited").await;
}

#[tokio::test]
async fn a_page_or_settings_call_of_someone_else_is_not_counted_in_the_members_window() {
    let app = TestApp::spawn_with(|s| s.rate_limit.requests_per_hour = 2).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let other = app.create_workspace(PlanTier::Advanced).await;
    let token = admin_token(&app, &ws).await;
    // Not a member of the other workspace: 404, and nothing counted.
    for _ in 0..3 {
        let res = app.client.get(app.url(&format!("/api/workspaces/{}/api-keys", other.id))).bearer_auth(&token);
        problem(res.send().await.expect("request"), 404, "not_found").await;
    }
    let res = channels(&app, &token).await;
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("1"));
}

#[tokio::test]
async fn anonymous_docs_search_is_full_text_only_and_60_a_minute_per_address() {
    let stand_in = crate::docs_stand_in::StandIn::start().await;
    let url = stand_in.url.clone();
    let app = TestApp::spawn_with(move |s| {
        s.embeddings.url = Some(format!("{url}/v1/embeddings"));
        s.embeddings.model = Some("stand-in".into());
        s.rerank.url = Some(url);
    })
    .await;
    let report = app::docs_search::ingest_embedded(&app.settings, &app.db).await.expect("ingest");
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let before = stand_in.calls();
    assert!(before > 0, "the ingest embedded the pages with the stand-in: hybrid is configured");

    let res = app.get("/docs?q=webhook%20signature").await;
    assert_eq!(res.status(), 200);
    let html = res.text().await.expect("html");
    assert!(html.contains("/docs/"), "full-text finds pages");
    assert_eq!(stand_in.calls(), before, "no embeddings or rerank call for a visitor");

    for i in 1..60 {
        let res = app.get(&format!("/docs?q=webhooks+{i}")).await;
        assert_eq!(res.status(), 200, "search {}", i + 1);
    }
    let res = app.get("/docs?q=one+too+many").await;
    assert_eq!(res.status(), 429, "the 61st search of the minute");
    let retry: u64 = header(&res, "retry-after").expect("Retry-After").parse().expect("seconds");
    assert!((1..=60).contains(&retry), "{retry}");
    assert!(res.text().await.expect("html").contains("try again"));
    assert_eq!(stand_in.calls(), before);

    // Browsing is not searching.
    assert_eq!(app.get("/docs").await.status(), 200);
    assert_eq!(app.get("/docs?q=").await.status(), 200, "an empty query searches nothing");
}
