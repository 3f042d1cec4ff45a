//! Liveness, readiness, unknown routes and request ids.

use crate::helpers::{problem, TestApp};

#[tokio::test]
async fn healthz_answers_200() {
    let app = TestApp::spawn().await;
    let res = app.get("/healthz").await;
    assert_eq!(res.status(), 200);
    assert!(res.headers().contains_key("x-request-id"));
}

#[tokio::test]
async fn readyz_answers_200_on_a_migrated_database() {
    let app = TestApp::spawn().await;
    let res = app.get("/readyz").await;
    assert_eq!(res.status(), 200);
    let body: serde_json::Value = res.json().await.expect("json");
    assert_eq!(body["status"], "ready");
}

#[tokio::test]
async fn readyz_answers_503_when_migrations_are_missing() {
    let app = TestApp::spawn().await;
    // A second, empty database on the same server: reachable but not migrated.
    let name = format!("{}_empty", app.database.name);
    let admin = test_db::admin_url();
    let mut conn =
        <diesel_async::AsyncPgConnection as diesel_async::AsyncConnection>::establish(&admin).await.expect("admin");
    diesel_async::RunQueryDsl::execute(diesel::sql_query(format!("CREATE DATABASE \"{name}\"")), &mut conn)
        .await
        .expect("create");
    let db = adapters_postgres::Db::new(&test_db::with_database(&admin, &name), 2, std::time::Duration::from_secs(5))
        .expect("pool");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(
        app::wiring::server(&app.settings, &db, app::wiring::state(&app.settings, &db), listener).expect("server"),
    );

    let res = app.client.get(format!("http://127.0.0.1:{port}/readyz")).send().await.expect("request");
    let body = problem(res, 503, "service_unavailable").await;
    assert!(body["detail"].as_str().unwrap_or("").contains("wms migrate"));
    drop(db);
    let _ = diesel_async::RunQueryDsl::execute(
        diesel::sql_query(format!("DROP DATABASE \"{name}\" WITH (FORCE)")),
        &mut conn,
    )
    .await;
}

#[tokio::test]
async fn readyz_answers_503_when_the_database_is_unreachable() {
    let app = TestApp::spawn().await;
    let db = adapters_postgres::Db::new("postgres://nobody@127.0.0.1:1/none", 1, std::time::Duration::from_millis(300))
        .expect("pool");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(
        app::wiring::server(&app.settings, &db, app::wiring::state(&app.settings, &db), listener).expect("server"),
    );
    let res = app.client.get(format!("http://127.0.0.1:{port}/readyz")).send().await.expect("request");
    problem(res, 503, "service_unavailable").await;
}

#[tokio::test]
async fn unknown_path_is_a_problem_404() {
    let app = TestApp::spawn().await;
    problem(app.get("/no/such/thing").await, 404, "not_found").await;
}

#[tokio::test]
async fn wrong_method_is_a_problem_405_naming_the_methods_there_are() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    for (path, method, allow) in [
        ("/healthz", reqwest::Method::DELETE, "GET"),
        ("/v1/auth/login", reqwest::Method::GET, "POST"),
        ("/v1/channels", reqwest::Method::PUT, "GET, POST"),
        ("/v1/users/1", reqwest::Method::POST, "GET, PATCH, DELETE"),
        ("/oauth/token", reqwest::Method::GET, "POST, OPTIONS"),
        ("/workspaces/1/co-admin/mcp", reqwest::Method::GET, "POST"),
    ] {
        let res = app.authed(method.clone(), path, &key).send().await.expect("request");
        let header = res.headers().get("allow").and_then(|v| v.to_str().ok()).map(str::to_owned);
        assert_eq!(header.as_deref(), Some(allow), "{method} {path}");
        problem(res, 405, "method_not_allowed").await;
    }
}

#[tokio::test]
async fn a_well_formed_request_id_is_echoed_and_a_bad_one_replaced() {
    let app = TestApp::spawn().await;
    let res = app.client.get(app.url("/healthz")).header("x-request-id", "abc-123").send().await.expect("request");
    assert_eq!(res.headers()["x-request-id"], "abc-123");
    let res =
        app.client.get(app.url("/healthz")).header("x-request-id", "bad id\twith junk").send().await.expect("request");
    let id = res.headers()["x-request-id"].to_str().expect("ascii").to_owned();
    assert_eq!(id.len(), 32);
    assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
}
