//! Reading the log: `GET /v1/audit-events` filters, pages and shows only its workspace; the
//! settings page renders for admins only.

use super::*;

#[tokio::test]
async fn the_list_filters_pages_and_names_bad_filters_and_shows_only_its_workspace() {
    let app = TestApp::spawn().await;
    let (ws, token) = advanced(&app).await;
    let (other, other_token) = advanced(&app).await;
    let keys = format!("/api/workspaces/{}/api-keys", ws.id);
    for name in ["a", "b", "c"] {
        assert_eq!(app.post_json(&keys, &token, &json!({"name": name})).await.status(), 201);
    }
    let other_keys = format!("/api/workspaces/{}/api-keys", other.id);
    assert_eq!(app.post_json(&other_keys, &other_token, &json!({"name": "theirs"})).await.status(), 201);

    let (status, page1) = app.get_json("/v1/audit-events?action=api_key.created&limit=2", &token).await;
    assert_eq!(status, 200);
    let names: Vec<&str> =
        page1["data"].as_array().expect("data").iter().filter_map(|r| r["details"]["name"].as_str()).collect();
    assert_eq!(names, ["c", "b"], "newest first");
    let cursor = page1["next_cursor"].as_str().expect("a next page").to_owned();
    let (_, page2) =
        app.get_json(&format!("/v1/audit-events?action=api_key.created&limit=2&cursor={cursor}"), &token).await;
    let names: Vec<&str> =
        page2["data"].as_array().expect("data").iter().filter_map(|r| r["details"]["name"].as_str()).collect();
    assert_eq!(names, ["a"]);
    assert!(page2["next_cursor"].is_null());
    // The cursor belongs to its filters: with others, or none, it is refused, not continued.
    for other_filters in ["action=api_key.revoked&", "actor_type=user&", ""] {
        let url = format!("/v1/audit-events?{other_filters}limit=2&cursor={cursor}");
        let p = problem(app.authed(Method::GET, &url, &token).send().await.expect("request"), 422, "validation_failed")
            .await;
        assert_eq!(error_fields(&p), ["cursor"], "{url}");
    }

    // Another workspace's records are never seen, whatever the filter.
    let (_, all) = app.get_json("/v1/audit-events?limit=100", &token).await;
    assert!(!all.to_string().contains("theirs"));
    assert_eq!(records(&app, &other_token, "api_key.created").await.len(), 1);

    let (_, by_user) = app.get_json("/v1/audit-events?actor_type=user&limit=100", &token).await;
    assert!(by_user["data"].as_array().expect("data").iter().all(|r| r["actor"]["type"] == "user"));
    assert!(by_user["data"].as_array().is_some_and(|d| d.len() >= 3));
    let (_, by_cli) = app.get_json("/v1/audit-events?actor_type=cli", &token).await;
    assert_eq!(by_cli["data"], json!([]));
    let (_, future) = app.get_json("/v1/audit-events?since=2999-01-01T00:00:00Z", &token).await;
    assert_eq!(future["data"], json!([]));
    let (_, past) = app.get_json("/v1/audit-events?until=2000-01-01T00:00:00Z", &token).await;
    assert_eq!(past["data"], json!([]));
    let (_, window) = app
        .get_json(
            "/v1/audit-events?since=2000-01-01T00:00:00Z&until=2999-01-01T00:00:00%2B02:00&action=api_key.created",
            &token,
        )
        .await;
    assert_eq!(window["data"].as_array().map(Vec::len), Some(3));

    let res = app.authed(
        Method::GET,
        "/v1/audit-events?action=api_key.stolen&actor_type=robot&since=yesterday&until=2026-13-01",
        &token,
    );
    let p = problem(res.send().await.expect("request"), 422, "validation_failed").await;
    assert_eq!(error_fields(&p), ["action", "actor_type", "since", "until"]);
    let res = app.authed(Method::GET, "/v1/audit-events?limit=0&cursor=nope", &token);
    let p = problem(res.send().await.expect("request"), 422, "validation_failed").await;
    assert_eq!(error_fields(&p), ["limit", "cursor"]);

    // Keys: only with `audit:read`.
    let unrelated = app.api_key_with_scopes(&ws, &["messages:read"]).await;
    let res = app.authed(Method::GET, "/v1/audit-events", &unrelated).send().await.expect("request");
    problem(res, 403, "insufficient_scope").await;
    let auditor = app.api_key_with_scopes(&ws, &["audit:read"]).await;
    assert_eq!(records(&app, &auditor, "api_key.created").await.len(), 3);
}

#[tokio::test]
async fn the_audit_log_page_renders_for_admins_and_refuses_agents() {
    use crate::pages::{sign_in, submit_login};
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Growth).await;
    let admin = sign_in(&app, &ws).await;
    let res = admin
        .post(
            &app,
            "/settings/integrations/webhooks",
            &[("url", "https://93.184.215.14/h"), ("events", "message.created")],
            true,
        )
        .await;
    assert!(res.status().is_success() || res.status().is_redirection(), "{}", res.status());

    let page = admin.get(&app, "/settings/workspace/audit-log").await;
    assert_eq!(page.status(), 200);
    let html = page.text().await.expect("html");
    assert!(
        html.contains("Audit log") && html.contains("webhook.created") && html.contains("user.signed_in"),
        "{html}"
    );
    assert!(html.contains("href=\"/settings/workspace/audit-log\""), "linked in the navigation");
    let filtered = admin.get(&app, "/settings/workspace/audit-log?action=user.signed_in").await;
    let html = filtered.text().await.expect("html");
    assert!(!html.contains("<code>webhook.created</code>"), "filtered");
    let bad = admin.get(&app, "/settings/workspace/audit-log?since=yesterday").await;
    assert_eq!(bad.status(), 422);
    assert!(bad.text().await.expect("html").contains("since"));

    let (email, password) = add_member(&app, ws.id, "agent").await;
    let res = submit_login(&app, &email, &password).await;
    let cookie = res
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("wms_session="))
        .map(|v| v.split(';').next().unwrap_or("").to_owned())
        .expect("agent session");
    let res = app
        .client
        .get(app.url("/settings/workspace/audit-log"))
        .header("cookie", &cookie)
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 403);
    let nav =
        app.client.get(app.url("/settings/workspace/members")).header("cookie", &cookie).send().await.expect("request");
    assert!(
        !nav.text().await.expect("html").contains("href=\"/settings/workspace/audit-log\""),
        "not offered to agents"
    );
}
