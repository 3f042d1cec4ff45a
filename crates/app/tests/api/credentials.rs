//! Helpers for the authentication tests: signing in, members, keys through the settings API, and
//! direct database changes that stand in for the passing of time.

#![allow(dead_code)]

use diesel_async::RunQueryDsl;
use domain::workspace::{PlanTier, WorkspaceId};
use serde_json::{json, Value};

use crate::helpers::{TestApp, TestWorkspace};

/// `POST /v1/auth/login` with `body`.
pub async fn login_raw(app: &TestApp, body: &Value) -> reqwest::Response {
    app.client.post(app.url("/v1/auth/login")).json(body).send().await.expect("request")
}

/// A login token of `ws`'s admin.
pub async fn admin_token(app: &TestApp, ws: &TestWorkspace) -> String {
    token_for(app, &ws.admin_email, &ws.admin_password, Some(ws.id)).await
}

/// A login token for these credentials.
pub async fn token_for(app: &TestApp, email: &str, password: &str, ws: Option<i64>) -> String {
    let res = login_raw(app, &json!({"email": email, "password": password, "workspace_id": ws})).await;
    assert_eq!(res.status(), 200, "login");
    let body: Value = res.json().await.expect("json");
    body["token"].as_str().expect("token").to_owned()
}

/// Adds an active member with `role` to workspace `ws` and returns their e-mail and password.
pub async fn add_member(app: &TestApp, ws: i64, role: &str) -> (String, String) {
    use domain::common::ports::{PasswordHasher, RandomSource};
    let mut b = [0u8; 6];
    app::platform::OsRandom.fill(&mut b);
    let email = format!("{role}-{}@test.wms", b.iter().map(|x| format!("{x:02x}")).collect::<String>());
    let password = "agent password 123".to_owned();
    let hash =
        app::platform::Argon2Hasher::default().hash(&domain::users::Password::attempt(&password)).await.expect("hash");
    sql(
        app,
        &format!(
            "WITH u AS (INSERT INTO users (email, name, password_hash) VALUES ('{email}', 'Member', '{}') RETURNING id) \
             INSERT INTO workspace_members (workspace_id, user_id, role) SELECT {ws}, id, '{role}' FROM u",
            hash.0
        ),
    )
    .await;
    (email, password)
}

/// Runs a statement on the test database.
pub async fn sql(app: &TestApp, statement: &str) {
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query(statement).execute(&mut conn).await.expect("sql");
}

/// A boolean query on the test database.
pub async fn sql_bool(app: &TestApp, query: &str) -> bool {
    #[derive(diesel::QueryableByName)]
    struct B {
        #[diesel(sql_type = diesel::sql_types::Bool)]
        b: bool,
    }
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query(format!("SELECT ({query}) AS b")).get_result::<B>(&mut conn).await.expect("sql").b
}

/// Changes the workspace's plan.
pub async fn set_plan(app: &TestApp, ws: i64, plan: PlanTier) {
    app::wiring::workspace_service(&app.db)
        .change_plan(&domain::audit::AuditContext::cli(), WorkspaceId(ws), plan)
        .await
        .expect("plan");
}

/// `POST /api/workspaces/{ws}/api-keys` with a bearer token.
pub async fn create_key_raw(app: &TestApp, ws: i64, token: &str, body: &Value) -> reqwest::Response {
    app.client
        .post(app.url(&format!("/api/workspaces/{ws}/api-keys")))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .expect("request")
}

/// A key created through the settings API by `ws`'s admin: the full key and its record.
pub async fn create_key(app: &TestApp, ws: &TestWorkspace, body: &Value) -> (String, Value) {
    let token = admin_token(app, ws).await;
    let res = create_key_raw(app, ws.id, &token, body).await;
    assert_eq!(res.status(), 201, "create key");
    let body: Value = res.json().await.expect("json");
    (body["key"].as_str().expect("key").to_owned(), body)
}

/// `GET /v1/channels` on `base` (an instance's address) with `Authorization: <value>`.
pub async fn channels_with(app: &TestApp, base: &str, authorization: &str) -> reqwest::Response {
    app.client.get(format!("{base}/v1/channels")).header("authorization", authorization).send().await.expect("request")
}

/// `GET /v1/channels` with a bearer token.
pub async fn channels(app: &TestApp, token: &str) -> reqwest::Response {
    channels_with(app, &app.address, &format!("Bearer {token}")).await
}

/// The header's value as text.
pub fn header(res: &reqwest::Response, name: &str) -> Option<String> {
    res.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
}
