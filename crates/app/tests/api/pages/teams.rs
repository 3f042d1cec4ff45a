//! `/settings/workspace/teams`: admins set a team's assignment policy from the page; agents see
//! the policies without the forms; bad values are named beside their field and change nothing.

use serde_json::{json, Value};

use super::*;

async fn team_of(app: &TestApp, key: &str, id: i64) -> Value {
    app.get_json(&format!("/v1/teams/{id}"), key).await.1
}

#[tokio::test]
async fn an_admin_sets_a_teams_assignment_policy_from_the_page() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let res = app.post_json("/v1/teams", &key, &json!({"name": "Tier 2", "member_ids": [ws.admin_id]})).await;
    let id = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    let b = sign_in(&app, &ws).await;
    let page = b.get(&app, "/settings/workspace/teams").await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.expect("html");
    assert!(html.contains("Tier 2") && html.contains("1 members") && html.contains("no capacity limit"), "{html}");
    let path = format!("/settings/workspace/teams/{id}");
    assert!(html.contains(&format!("action=\"{path}\"")), "the admin gets the form");

    let saved = b.post(&app, &path, &[("mode", "balanced"), ("capacity", "5")], true).await;
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);
    assert_eq!(saved.headers()[LOCATION], "/settings/workspace/teams");
    assert_eq!(team_of(&app, &key, id).await["assignment"], json!({"mode": "balanced", "capacity": 5}));
    let shown = b.get(&app, "/settings/workspace/teams").await.text().await.expect("html");
    assert!(shown.contains("balanced, capacity 5"), "{shown}");
    let audited = crate::assistant_helpers::sql_json(
        &app,
        "SELECT (details -> 'assignment')::text AS j FROM audit_events WHERE workspace_id = $1 \
         AND action = 'team.updated' ORDER BY id DESC LIMIT 1",
        ws.id,
    )
    .await;
    assert_eq!(audited, json!({"mode": "balanced", "capacity": 5}));

    // An empty capacity is no limit.
    let saved = b.post(&app, &path, &[("mode", "round_robin"), ("capacity", "")], true).await;
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);
    assert_eq!(team_of(&app, &key, id).await["assignment"], json!({"mode": "round_robin", "capacity": null}));
}

#[tokio::test]
async fn bad_policies_are_named_beside_their_field_and_change_nothing() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let res = app.post_json("/v1/teams", &key, &json!({"name": "Tier 2"})).await;
    let id = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    let before = team_of(&app, &key, id).await;
    let b = sign_in(&app, &ws).await;
    let path = format!("/settings/workspace/teams/{id}");
    for (fields, field_id) in [
        (&[("mode", "balanced"), ("capacity", "0")][..], "capacity"),
        (&[("mode", "balanced"), ("capacity", "five")][..], "capacity"),
        (&[("mode", "random"), ("capacity", "")][..], "mode"),
    ] {
        let res = b.post(&app, &path, fields, true).await;
        assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY, "{fields:?}");
        let html = res.text().await.expect("html");
        assert!(html.contains(&format!("id=\"team-{id}-{field_id}-error\"")), "{fields:?}: {html}");
    }
    // Without the anti-forgery field: refused.
    let res = b.post(&app, &path, &[("mode", "balanced"), ("capacity", "3")], false).await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert_eq!(team_of(&app, &key, id).await, before, "nothing changed");

    // Another workspace's team is not found.
    let other = app.advanced_with_key().await.0;
    let stranger = sign_in(&app, &other).await;
    let res = stranger.post(&app, &path, &[("mode", "balanced"), ("capacity", "3")], true).await;
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    assert!(!stranger.get(&app, "/settings/workspace/teams").await.text().await.expect("html").contains("Tier 2"));
    assert_eq!(team_of(&app, &key, id).await, before, "nothing changed");
}

#[tokio::test]
async fn an_agent_sees_the_policies_but_may_not_change_them() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let res = app.post_json("/v1/teams", &key, &json!({"name": "Tier 2"})).await;
    let id = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    let (email, password) = crate::credentials::add_member(&app, ws.id, "agent").await;
    let agent =
        sign_in(&app, &crate::helpers::TestWorkspace { admin_email: email, admin_password: password, ..ws }).await;
    let html = agent.get(&app, "/settings/workspace/teams").await.text().await.expect("html");
    assert!(html.contains("Tier 2") && !html.contains("action=\"/settings/workspace/teams/"), "{html}");
    let path = format!("/settings/workspace/teams/{id}");
    let res = agent.post(&app, &path, &[("mode", "balanced"), ("capacity", "3")], true).await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert_eq!(team_of(&app, &key, id).await["assignment"]["mode"], "manual");
}
