//! Teams are managed by admins only (docs/contract.md, "Access"), so their changes are privileged and
//! recorded like labels': `team.created` (name and members), `team.updated` (the fields changed),
//! `team.deleted`; a refused or invalid change, or one of a team that does not exist, leaves none.

use reqwest::Method;
use serde_json::json;

use super::{advanced, check, count, one, records, req};
use crate::credentials::{add_member, token_for};
use crate::helpers::TestApp;

#[tokio::test]
async fn team_changes_are_recorded_once_and_failed_ones_not_at_all() {
    let app = TestApp::spawn().await;
    let (ws, token) = advanced(&app).await;
    let actor = ("user", Some(ws.admin_id));
    let before = count(&app, ws.id).await;
    let body = json!({"name": "Tier 2", "member_ids": [ws.admin_id]});
    let res = req(&app, Method::POST, "/v1/teams", &token, "rid-team-create").json(&body).send().await;
    let res = res.expect("request");
    assert_eq!(res.status(), 201);
    let id = res.json::<serde_json::Value>().await.expect("json")["id"].as_i64().expect("id");
    let r = one(&app, &token, "team.created").await;
    check(&r, actor, ("team", id), "rid-team-create");
    assert_eq!(r["details"], json!({"name": "Tier 2", "member_ids": [ws.admin_id]}));

    // Refused and invalid: the same name (409), a member of no one's workspace (422), an empty
    // change (422), and an agent (403) leave nothing.
    let res = req(&app, Method::POST, "/v1/teams", &token, "rid-team-dup").json(&body).send().await;
    assert_eq!(res.expect("request").status(), 409);
    let res = req(&app, Method::POST, "/v1/teams", &token, "rid-team-bad")
        .json(&json!({"name": "Ghosts", "member_ids": [987_654]}))
        .send()
        .await;
    assert_eq!(res.expect("request").status(), 422);
    let path = format!("/v1/teams/{id}");
    let res = req(&app, Method::PATCH, &path, &token, "rid-team-empty").json(&json!({})).send().await;
    assert_eq!(res.expect("request").status(), 422);
    let (email, password) = add_member(&app, ws.id, "agent").await;
    let agent = token_for(&app, &email, &password, Some(ws.id)).await;
    let res = req(&app, Method::DELETE, &path, &agent, "rid-team-agent").send().await;
    assert_eq!(res.expect("request").status(), 403);
    assert_eq!(records(&app, &token, "team.created").await.len(), 1);
    assert!(records(&app, &token, "team.updated").await.is_empty());
    assert!(records(&app, &token, "team.deleted").await.is_empty());

    let res = req(&app, Method::PATCH, &path, &token, "rid-team-update").json(&json!({"name": "Tier 3"}));
    assert_eq!(res.send().await.expect("request").status(), 200);
    let r = one(&app, &token, "team.updated").await;
    check(&r, actor, ("team", id), "rid-team-update");
    assert_eq!(r["details"]["fields"], json!(["name"]));

    let res = req(&app, Method::DELETE, &path, &token, "rid-team-delete").send().await;
    assert_eq!(res.expect("request").status(), 204);
    check(&one(&app, &token, "team.deleted").await, actor, ("team", id), "rid-team-delete");
    // Gone: changing or deleting it again is 404 and not recorded.
    let res = req(&app, Method::PATCH, &path, &token, "rid-team-404").json(&json!({"name": "X"}));
    assert_eq!(res.send().await.expect("request").status(), 404);
    let res = req(&app, Method::DELETE, &path, &token, "rid-team-404-2").send().await;
    assert_eq!(res.expect("request").status(), 404);
    assert_eq!(records(&app, &token, "team.updated").await.len(), 1);
    assert_eq!(records(&app, &token, "team.deleted").await.len(), 1);
    // Exactly the three changes (sign-ins are not counted; the agent was added in SQL).
    assert_eq!(count(&app, ws.id).await, before + 3);
}
