//! `/v1/users/{user_id}`

use reqwest::Method;
use serde_json::json;

use crate::helpers::{error_fields, problem, TestApp};

async fn add_member(app: &TestApp, ws: i64, role: &str) -> i64 {
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Id {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        id: i64,
    }
    let mut conn = app.db.conn().await.expect("conn");
    let email = format!("member-{}-{}@test.wms", ws, rand_suffix());
    let id: Id =
        diesel::sql_query("INSERT INTO users (email, name, password_hash) VALUES ($1, 'Member', 'x') RETURNING id")
            .bind::<diesel::sql_types::Text, _>(&email)
            .get_result(&mut conn)
            .await
            .expect("user");
    diesel::sql_query("INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, $3)")
        .bind::<diesel::sql_types::BigInt, _>(ws)
        .bind::<diesel::sql_types::BigInt, _>(id.id)
        .bind::<diesel::sql_types::Text, _>(role)
        .execute(&mut conn)
        .await
        .expect("member");
    id.id
}

fn rand_suffix() -> u64 {
    use rand::RngCore;
    rand::rngs::OsRng.next_u64()
}

async fn patch(app: &TestApp, key: &str, id: i64, body: serde_json::Value) -> reqwest::Response {
    app.authed(Method::PATCH, &format!("/v1/users/{id}"), key).json(&body).send().await.expect("request")
}

#[tokio::test]
async fn a_member_profile_is_shown_and_updated() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let (status, me) = app.get_json(&format!("/v1/users/{}", ws.admin_id), &key).await;
    assert_eq!(status, 200);
    assert_eq!(
        (me["email"].as_str(), me["role"].as_str(), me["active"].as_bool()),
        (Some(ws.admin_email.as_str()), Some("admin"), Some(true))
    );
    assert!(me.get("password_hash").is_none());

    let agent = add_member(&app, ws.id, "agent").await;
    assert_eq!(me["status"], "active");
    // A key manages agents; promoting to admin needs an admin member.
    problem(patch(&app, &key, agent, json!({"role": "admin"})).await, 403, "forbidden").await;
    let admin = crate::credentials::admin_token(&app, &ws).await;
    let res = patch(&app, &admin, agent, json!({"name": "Ana Costa", "role": "admin"})).await;
    assert_eq!(res.status(), 200);
    let updated: serde_json::Value = res.json().await.expect("json");
    assert_eq!((updated["name"].as_str(), updated["role"].as_str()), (Some("Ana Costa"), Some("admin")));
    let res = patch(&app, &admin, agent, json!({"active": false})).await;
    let off: serde_json::Value = res.json().await.expect("json");
    assert_eq!((off["active"].as_bool(), off["status"].as_str()), (Some(false), Some("deactivated")));
}

#[tokio::test]
async fn keys_never_touch_an_admin_and_admins_never_their_own_role() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    problem(patch(&app, &key, ws.admin_id, json!({"role": "agent"})).await, 403, "forbidden").await;
    problem(patch(&app, &key, ws.admin_id, json!({"active": false})).await, 403, "forbidden").await;
    // Nor anything else of an admin: a key manages agent members only.
    problem(patch(&app, &key, ws.admin_id, json!({"name": "Renamed by a key"})).await, 403, "forbidden").await;
    problem(patch(&app, &key, ws.admin_id, json!({"availability": "away"})).await, 403, "forbidden").await;
    let res = app.authed(Method::DELETE, &format!("/v1/users/{}", ws.admin_id), &key).send().await.expect("request");
    problem(res, 403, "forbidden").await;
    let admin = crate::credentials::admin_token(&app, &ws).await;
    problem(patch(&app, &admin, ws.admin_id, json!({"role": "agent"})).await, 403, "forbidden").await;
    // With a second admin, an admin may step the first down.
    let second = add_member(&app, ws.id, "admin").await;
    assert_eq!(patch(&app, &admin, second, json!({"role": "agent"})).await.status(), 200);
    let (_, me) = app.get_json(&format!("/v1/users/{}", ws.admin_id), &key).await;
    assert_eq!(me["role"], "admin");
}

#[tokio::test]
async fn removing_a_member_keeps_the_user_elsewhere() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let agent = add_member(&app, ws.id, "agent").await;
    let res = app.authed(Method::DELETE, &format!("/v1/users/{agent}"), &key).send().await.expect("request");
    assert_eq!(res.status(), 204);
    let res = app.authed(Method::GET, &format!("/v1/users/{agent}"), &key).send().await.expect("request");
    problem(res, 404, "not_found").await;
    let res = app.authed(Method::DELETE, &format!("/v1/users/{agent}"), &key).send().await.expect("request");
    problem(res, 404, "not_found").await;
}

#[tokio::test]
async fn someone_outside_the_workspace_is_not_found() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let other = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let res = app.authed(Method::GET, &format!("/v1/users/{}", other.admin_id), &key).send().await.expect("request");
    problem(res, 404, "not_found").await;
    problem(patch(&app, &key, other.admin_id, json!({"name": "Hijacked"})).await, 404, "not_found").await;
    let res = app.authed(Method::DELETE, &format!("/v1/users/{}", other.admin_id), &key).send().await.expect("request");
    problem(res, 404, "not_found").await;
    // An agent may change only themselves; someone of another workspace is still not found.
    let (ws, _) = app.advanced_with_key().await;
    let (email, password) = crate::credentials::add_member(&app, ws.id, "agent").await;
    let agent = crate::credentials::token_for(&app, &email, &password, Some(ws.id)).await;
    problem(patch(&app, &agent, other.admin_id, json!({"name": "Hijacked"})).await, 404, "not_found").await;
    problem(patch(&app, &agent, ws.admin_id, json!({"name": "Renamed"})).await, 403, "forbidden").await;
}

#[tokio::test]
async fn invalid_updates_name_the_field() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    for (body, field) in [
        (json!({"role": "owner"}), "role"),
        (json!({"name": ""}), "name"),
        (json!({"active": "yes"}), "active"),
        (json!({"email": "new@x.io"}), "email"),
        (json!({}), "body"),
    ] {
        let p = problem(patch(&app, &key, ws.admin_id, body.clone()).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), [field], "{body}");
    }
}

#[tokio::test]
async fn users_need_credentials() {
    let app = TestApp::spawn().await;
    problem(app.get("/v1/users/1").await, 401, "unauthenticated").await;
}

/// A key changes agents only, also when an admin promotes the agent at the same moment: the role is
/// read again, row locked, in the change's transaction (read before it, the promotion committing in
/// between let the key deactivate or remove a new admin).
#[tokio::test]
async fn a_key_never_changes_a_member_promoted_while_it_asks() {
    use diesel_async::RunQueryDsl;
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    for remove in [false, true] {
        let agent = add_member(&app, ws.id, "agent").await;
        let mut other = app.db.conn().await.expect("conn");
        diesel::sql_query("BEGIN").execute(&mut other).await.expect("begin");
        let promote =
            format!("UPDATE workspace_members SET role = 'admin' WHERE workspace_id = {} AND user_id = {agent}", ws.id);
        diesel::sql_query(promote).execute(&mut other).await.expect("promote");
        let request = if remove {
            app.authed(Method::DELETE, &format!("/v1/users/{agent}"), &key)
        } else {
            app.authed(Method::PATCH, &format!("/v1/users/{agent}"), &key).json(&json!({"active": false}))
        };
        let asked = tokio::spawn(async move { request.send().await.expect("request") });
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        diesel::sql_query("COMMIT").execute(&mut other).await.expect("commit");
        let res = asked.await.expect("task");
        problem(res, 403, "forbidden").await;
        let (status, member) = app.get_json(&format!("/v1/users/{agent}"), &key).await;
        assert_eq!((status, &member["role"], &member["active"]), (200, &json!("admin"), &json!(true)), "{member}");
    }
}
