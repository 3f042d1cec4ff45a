//! `/v1/teams` (with their members) and `/v1/ai-agents`.

use reqwest::Method;
use serde_json::{json, Value};

use crate::assistant_helpers::{exec, sql_json};
use crate::credentials::{add_member, token_for};
use crate::helpers::{error_fields, problem, TestApp};
use crate::rest_labels::thread;

async fn send(app: &TestApp, method: Method, path: &str, key: &str, body: Option<Value>) -> reqwest::Response {
    let req = app.authed(method, path, key);
    let req = match body {
        Some(b) => req.json(&b),
        None => req,
    };
    req.send().await.expect("request")
}

async fn member(app: &TestApp, ws: i64, role: &str) -> i64 {
    let (email, _) = add_member(app, ws, role).await;
    sql_json(
        app,
        &format!("SELECT json_build_object('id', id)::text AS j FROM users WHERE email = '{email}' AND $1 > 0"),
        ws,
    )
    .await["id"]
        .as_i64()
        .expect("id")
}

#[tokio::test]
async fn teams_are_created_read_listed_changed_and_deleted() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ana = member(&app, ws.id, "agent").await;
    let res = app.post_json("/v1/teams", &key, &json!({"name": "Tier 2", "member_ids": [ana, ws.admin_id, ana]})).await;
    assert_eq!(res.status(), 201);
    let location = res.headers().get("location").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let team: Value = res.json().await.expect("json");
    let mut keys: Vec<&str> = team.as_object().expect("object").keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["assignment", "created_at", "id", "member_ids", "name"]);
    let mut expected = vec![ana, ws.admin_id];
    expected.sort_unstable();
    assert_eq!(team["member_ids"], json!(expected), "members sorted, each once");
    let path = format!("/v1/teams/{}", team["id"]);
    assert_eq!(location.as_deref(), Some(path.as_str()));

    let (status, got) = app.get_json(&path, &key).await;
    assert_eq!((status, &got), (200, &team));
    let res = app.post_json("/v1/teams", &key, &json!({"name": "Billing"})).await;
    assert_eq!(res.json::<Value>().await.expect("json")["member_ids"], json!([]), "members are optional");
    let (_, page) = app.get_json("/v1/teams?limit=1", &key).await;
    assert_eq!(page["data"][0], team);
    let (_, page) = app
        .get_json(&format!("/v1/teams?limit=1&cursor={}", page["next_cursor"].as_str().expect("cursor")), &key)
        .await;
    assert_eq!((page["data"][0]["name"].clone(), page["next_cursor"].clone()), (json!("Billing"), Value::Null));

    let res = send(&app, Method::PATCH, &path, &key, Some(json!({"member_ids": [ana]}))).await;
    assert_eq!(res.status(), 200);
    let changed: Value = res.json().await.expect("json");
    assert_eq!((&changed["member_ids"], &changed["name"]), (&json!([ana]), &json!("Tier 2")));
    let res = send(&app, Method::PATCH, &path, &key, Some(json!({"name": "Escalations"}))).await;
    assert_eq!(res.json::<Value>().await.expect("json")["member_ids"], json!([ana]), "an omitted field is kept");
    problem(send(&app, Method::PATCH, &path, &key, Some(json!({"name": "Billing"}))).await, 409, "conflict").await;
    problem(app.post_json("/v1/teams", &key, &json!({"name": "Billing"})).await, 409, "conflict").await;

    assert_eq!(send(&app, Method::DELETE, &path, &key, None).await.status(), 204);
    problem(send(&app, Method::GET, &path, &key, None).await, 404, "not_found").await;
    problem(send(&app, Method::DELETE, &path, &key, None).await, 404, "not_found").await;
}

/// A team may be created with its assignment policy, checked as a change's is.
#[tokio::test]
async fn a_team_is_created_with_its_assignment_policy() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let body = json!({"name": "Sales", "assignment": {"mode": "balanced", "capacity": 5}});
    let res = app.post_json("/v1/teams", &key, &body).await;
    assert_eq!(res.status(), 201);
    let team: Value = res.json().await.expect("json");
    assert_eq!(team["assignment"], json!({"mode": "balanced", "capacity": 5}));
    let (_, got) = app.get_json(&format!("/v1/teams/{}", team["id"]), &key).await;
    assert_eq!(got["assignment"], team["assignment"]);
    // Without one: manual, no capacity.
    let res = app.post_json("/v1/teams", &key, &json!({"name": "Support"})).await;
    let team: Value = res.json().await.expect("json");
    assert_eq!(team["assignment"], json!({"mode": "manual", "capacity": null}));
    // A bad policy names its field and creates nothing.
    for bad in [json!({"mode": "random"}), json!({"mode": "balanced", "capacity": 0})] {
        let res = app.post_json("/v1/teams", &key, &json!({"name": "Bad", "assignment": bad})).await;
        let p = problem(res, 422, "validation_failed").await;
        assert!(error_fields(&p).iter().all(|f| f.starts_with("assignment")), "{p}");
    }
    let (_, all) = app.get_json("/v1/teams", &key).await;
    assert_eq!(all["data"].as_array().map(Vec::len), Some(2), "{all}");
}

#[tokio::test]
async fn members_must_belong_to_the_workspace_and_input_is_validated() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let other = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    for (body, fields) in [
        (json!({"name": "A", "member_ids": [other.admin_id]}), vec!["member_ids"]),
        (json!({"name": "A", "member_ids": [ws.admin_id, 987654]}), vec!["member_ids"]),
        (json!({"name": "A", "member_ids": "1"}), vec!["member_ids"]),
        (json!({"name": " "}), vec!["name"]),
        (json!({"name": "x".repeat(101)}), vec!["name"]),
        (json!({"member_ids": []}), vec!["name"]),
        (json!({"name": "A", "lead": 1}), vec!["lead"]),
    ] {
        let p = problem(app.post_json("/v1/teams", &key, &body).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), fields, "{body}");
    }
    let (_, list) = app.get_json("/v1/teams", &key).await;
    assert_eq!(list["data"], json!([]), "nothing was written");

    let team: Value = app
        .post_json("/v1/teams", &key, &json!({"name": "A", "member_ids": [ws.admin_id]}))
        .await
        .json()
        .await
        .expect("json");
    let path = format!("/v1/teams/{}", team["id"]);
    for (body, field) in
        [(json!({}), "body"), (json!({"member_ids": [other.admin_id]}), "member_ids"), (json!({"name": ""}), "name")]
    {
        let p =
            problem(send(&app, Method::PATCH, &path, &key, Some(body.clone())).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), [field], "{body}");
    }
    let (_, unchanged) = app.get_json(&path, &key).await;
    assert_eq!(unchanged, team, "a refused change writes nothing");

    // Another workspace's team is not found, and not listed.
    let other_key = app.api_key(&other).await;
    for method in [Method::GET, Method::DELETE] {
        problem(send(&app, method, &path, &other_key, None).await, 404, "not_found").await;
    }
    problem(send(&app, Method::PATCH, &path, &other_key, Some(json!({"name": "Mine"}))).await, 404, "not_found").await;
    assert_eq!(app.get_json("/v1/teams", &other_key).await.1["data"], json!([]));
}

#[tokio::test]
async fn deleting_a_team_unassigns_its_threads_with_an_event() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let hook = json!({"url": "https://hooks.example.com/t", "platform": "custom", "events": ["thread.assigned"]});
    assert_eq!(app.post_json("/v1/webhooks", &key, &hook).await.status(), 201);
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let t = thread(&app, &key, ch, "+14155550123").await;
    let body = json!({"name": "Tier 2", "member_ids": [ws.admin_id]});
    let team: Value = app.post_json("/v1/teams", &key, &body).await.json().await.expect("json");
    let assign = json!({"assignee": {"type": "team", "id": team["id"]}});
    let res = send(&app, Method::PATCH, &format!("/v1/threads/{t}"), &key, Some(assign.clone())).await;
    assert_eq!(res.status(), 200);
    // A thread the team's round robin gave to its member: it keeps the member.
    let team_path = format!("/v1/teams/{}", team["id"]);
    let policy = json!({"assignment": {"mode": "round_robin", "capacity": null}});
    assert_eq!(send(&app, Method::PATCH, &team_path, &key, Some(policy)).await.status(), 200);
    let default_team = json!({"default_team_id": team["id"]});
    assert_eq!(send(&app, Method::PATCH, &format!("/v1/channels/{ch}"), &key, Some(default_team)).await.status(), 200);
    let held = crate::lifecycle::new_thread(&app, &key, ch, "+14155550124").await;
    let (_, before) = app.get_json(&format!("/v1/threads/{held}"), &key).await;
    assert_eq!((before["assignee"]["id"].clone(), before["team_id"].clone()), (json!(ws.admin_id), team["id"].clone()));
    let events_before = assigned_events(&app, ws.id).await;

    assert_eq!(send(&app, Method::DELETE, &team_path, &key, None).await.status(), 204);
    let (_, now) = app.get_json(&format!("/v1/threads/{t}"), &key).await;
    assert_eq!(now["assignee"], Value::Null);
    assert_eq!((now["team_id"].clone(), now["assignment_reason"].clone()), (Value::Null, json!("team_deleted")));
    let events = assigned_events(&app, ws.id).await;
    assert_eq!(events.len(), events_before.len() + 1, "one thread.assigned, for the thread of the team itself");
    assert_eq!(events.last(), Some(&now), "the event carries the thread as the API shows it, nothing more");
    let (_, kept) = app.get_json(&format!("/v1/threads/{held}"), &key).await;
    assert_eq!(kept["assignee"], before["assignee"], "the member keeps the thread");
    assert_eq!((kept["team_id"].clone(), kept["assignment_reason"].clone()), (Value::Null, json!("round_robin")));
    // Assigning to the deleted team is refused like any unknown team.
    let p = problem(
        send(&app, Method::PATCH, &format!("/v1/threads/{t}"), &key, Some(assign)).await,
        422,
        "validation_failed",
    )
    .await;
    assert_eq!(error_fields(&p), ["assignee.id"]);
    let (status, members) = app.get_json(&format!("/v1/users/{}", ws.admin_id), &key).await;
    assert_eq!((status, members["active"].clone()), (200, json!(true)), "members stay when their team goes");
}

/// Assigning a thread to a team while the team is being deleted: the assignment is refused as an
/// unknown team, or made and then undone by the deletion (`team_deleted`); never a 500 (the
/// deletion could commit between the team's check and the write, which then failed on the
/// foreign key).
#[tokio::test]
async fn assigning_to_a_team_being_deleted_is_never_a_500() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let t = thread(&app, &key, ch, "+14155550123").await;
    let thread_path = format!("/v1/threads/{t}");
    for round in 0..25 {
        let team: Value =
            app.post_json("/v1/teams", &key, &json!({"name": format!("T{round}")})).await.json().await.expect("json");
        let assign = json!({"assignee": {"type": "team", "id": team["id"]}});
        let team_path = format!("/v1/teams/{}", team["id"]);
        let (patch, delete) = tokio::join!(
            send(&app, Method::PATCH, &thread_path, &key, Some(assign)),
            send(&app, Method::DELETE, &team_path, &key, None),
        );
        let (patch, delete) = (patch.status().as_u16(), delete.status().as_u16());
        assert_eq!(delete, 204, "round {round}");
        assert!(matches!(patch, 200 | 422), "round {round}: PATCH answered {patch}");
        let (_, now) = app.get_json(&format!("/v1/threads/{t}"), &key).await;
        assert_eq!(now["assignee"], Value::Null, "round {round}: {now}");
        if patch == 200 {
            assert_eq!(now["assignment_reason"], "team_deleted", "round {round}: {now}");
        }
    }
}

/// The `data` of the workspace's `thread.assigned` events, oldest first.
async fn assigned_events(app: &TestApp, ws: i64) -> Vec<Value> {
    let all = sql_json(
        app,
        "SELECT coalesce(json_agg(payload::jsonb -> 'data' ORDER BY id), '[]')::text AS j FROM webhook_events \
         WHERE workspace_id = $1 AND event_type = 'thread.assigned'",
        ws,
    )
    .await;
    all.as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn teams_follow_the_scopes_and_the_agent_role() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let team: Value = app.post_json("/v1/teams", &key, &json!({"name": "Tier 2"})).await.json().await.expect("json");
    let reader = app.api_key_with_scopes(&ws, &["teams:read"]).await;
    assert_eq!(app.get_json(&format!("/v1/teams/{}", team["id"]), &reader).await.0, 200);
    problem(app.post_json("/v1/teams", &reader, &json!({"name": "B"})).await, 403, "insufficient_scope").await;
    let (email, password) = add_member(&app, ws.id, "agent").await;
    let agent = token_for(&app, &email, &password, Some(ws.id)).await;
    assert_eq!(app.get_json("/v1/teams", &agent).await.0, 200);
    problem(app.post_json("/v1/teams", &agent, &json!({"name": "B"})).await, 403, "forbidden").await;
    problem(send(&app, Method::DELETE, &format!("/v1/teams/{}", team["id"]), &agent, None).await, 403, "forbidden")
        .await;
}

#[tokio::test]
async fn ai_agents_are_listed_and_read_with_teams_read() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let other = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    exec(&app, "INSERT INTO ai_agents (workspace_id, name, status) VALUES ($1, 'Order assistant', 'active'), ($1, 'Returns bot', 'draft')", ws.id).await;
    exec(&app, "INSERT INTO ai_agents (workspace_id, name, status) VALUES ($1, 'Elsewhere', 'active')", other.id).await;
    let (status, page) = app.get_json("/v1/ai-agents?limit=1", &key).await;
    assert_eq!(status, 200);
    let first = page["data"][0].clone();
    let mut keys: Vec<&str> = first.as_object().expect("object").keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["created_at", "id", "name", "status"]);
    assert_eq!((&first["name"], &first["status"]), (&json!("Order assistant"), &json!("active")));
    let (_, next) =
        app.get_json(&format!("/v1/ai-agents?cursor={}", page["next_cursor"].as_str().expect("cursor")), &key).await;
    assert_eq!(
        next["data"].as_array().map(|d| d.iter().map(|a| a["name"].clone()).collect::<Vec<_>>()),
        Some(vec![json!("Returns bot")])
    );
    let (status, one) = app.get_json(&format!("/v1/ai-agents/{}", first["id"]), &key).await;
    assert_eq!((status, one), (200, first.clone()));

    let other_key = app.api_key(&other).await;
    problem(
        send(&app, Method::GET, &format!("/v1/ai-agents/{}", first["id"]), &other_key, None).await,
        404,
        "not_found",
    )
    .await;
    let teams_reader = app.api_key_with_scopes(&ws, &["teams:read"]).await;
    assert_eq!(app.get_json("/v1/ai-agents", &teams_reader).await.0, 200);
    let threads_reader = app.api_key_with_scopes(&ws, &["threads:read"]).await;
    let res = send(&app, Method::GET, "/v1/ai-agents", &threads_reader, None).await;
    let www = res.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    problem(res, 403, "insufficient_scope").await;
    assert!(www.contains("scope=\"teams:read\""), "{www}");
    let (email, password) = add_member(&app, ws.id, "agent").await;
    let agent = token_for(&app, &email, &password, Some(ws.id)).await;
    assert_eq!(app.get_json("/v1/ai-agents", &agent).await.0, 200);
}
