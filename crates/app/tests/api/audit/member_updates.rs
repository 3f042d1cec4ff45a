//! A member's new name in the audit log (`member.updated`): by an admin or by the member, with
//! the name before and after; the same name again is no change and leaves no record.

use reqwest::Method;
use serde_json::json;

use super::{advanced, check, records, req};
use crate::credentials::{add_member, token_for};
use crate::helpers::TestApp;

#[tokio::test]
async fn renames_are_recorded_by_whoever_made_them_with_the_name_before() {
    let app = TestApp::spawn().await;
    let (ws, token) = advanced(&app).await;
    let (email, password) = add_member(&app, ws.id, "agent").await;
    let agent = token_for(&app, &email, &password, Some(ws.id)).await;
    let (_, me) = app.get_json("/v1/users?limit=100", &token).await;
    let agent_id = me["data"]
        .as_array()
        .and_then(|all| all.iter().find(|u| u["email"] == email.as_str()))
        .and_then(|u| u["id"].as_i64())
        .expect("the agent");
    let path = format!("/v1/users/{agent_id}");
    let old_name = me["data"].as_array().and_then(|all| all.iter().find(|u| u["id"] == agent_id)).expect("row")["name"]
        .as_str()
        .expect("name")
        .to_owned();

    let res = req(&app, Method::PATCH, &path, &token, "rid-rename").json(&json!({"name": "Zed Admin-Named"}));
    assert_eq!(res.send().await.expect("request").status(), 200);
    let all = records(&app, &token, "member.updated").await;
    assert_eq!(all.len(), 1, "{all:?}");
    check(&all[0], ("user", Some(ws.admin_id)), ("user", agent_id), "rid-rename");
    assert_eq!(all[0]["details"]["fields"], json!(["name"]));
    assert_eq!(all[0]["details"]["name"], "Zed Admin-Named");
    assert_eq!(all[0]["details"]["previous_name"], old_name.as_str());

    // The member renames themselves: recorded with them as the actor.
    let res = req(&app, Method::PATCH, &path, &agent, "rid-self-rename").json(&json!({"name": "Zed"}));
    assert_eq!(res.send().await.expect("request").status(), 200);
    let all = records(&app, &token, "member.updated").await;
    assert_eq!(all.len(), 2, "{all:?}");
    check(&all[0], ("user", Some(agent_id)), ("user", agent_id), "rid-self-rename");
    assert_eq!(all[0]["details"]["previous_name"], "Zed Admin-Named");

    // The same name again changes nothing: no record. A rename with a new role: one record each.
    let res = req(&app, Method::PATCH, &path, &agent, "rid-same").json(&json!({"name": "Zed"}));
    assert_eq!(res.send().await.expect("request").status(), 200);
    assert_eq!(records(&app, &token, "member.updated").await.len(), 2);
    let both = json!({"name": "Zed Admin", "role": "admin"});
    let res = req(&app, Method::PATCH, &path, &token, "rid-both").json(&both);
    assert_eq!(res.send().await.expect("request").status(), 200);
    assert_eq!(records(&app, &token, "member.updated").await.len(), 3);
    assert_eq!(records(&app, &token, "member.role_changed").await.len(), 1);
}
