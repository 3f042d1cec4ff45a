//! Password reset by e-mailed link (issue 27): the same 202 for every address, a one-hour link to
//! the address only, a new password that signs the account out everywhere and voids its other
//! links, and the sign-in throttle's budgets.

use serde_json::json;

use crate::credentials::admin_token;
use crate::helpers::{error_fields, problem, TestApp};

async fn ask(app: &TestApp, email: &str) -> reqwest::Response {
    app.client.post(app.url("/v1/auth/password-reset")).json(&json!({"email": email})).send().await.expect("request")
}

async fn login_status(app: &TestApp, email: &str, password: &str) -> u16 {
    let body = json!({"email": email, "password": password});
    app.client.post(app.url("/v1/auth/login")).json(&body).send().await.expect("request").status().as_u16()
}

#[tokio::test]
async fn a_reset_link_sets_a_new_password_signs_out_everywhere_and_works_once() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let old_token = admin_token(&app, &ws).await;
    let page = app.get("/login").await.text().await.expect("html");
    assert!(page.contains("href=\"/password-reset\""), "the sign-in page links to the reset");

    // Unknown and malformed addresses: 202 without an e-mail, and 422 naming `email`.
    assert_eq!(ask(&app, "nobody@nowhere.test").await.status(), 202);
    let bad = problem(ask(&app, "not-an-email").await, 422, "validation_failed").await;
    assert_eq!(error_fields(&bad), ["email"]);

    assert_eq!(ask(&app, &ws.admin_email).await.status(), 202);
    let first = sink.token_for(&ws.admin_email, "password-reset", 0).await;
    assert_eq!(ask(&app, &ws.admin_email).await.status(), 202);
    let second = sink.token_for(&ws.admin_email, "password-reset", 1).await;
    assert!(sink.to("nobody@nowhere.test").is_empty());

    assert_eq!(app.get(&format!("/password-reset/{second}")).await.status(), 200);
    let short = app
        .client
        .post(app.url(&format!("/password-reset/{second}")))
        .form(&[("password", "short")])
        .send()
        .await
        .expect("request");
    assert_eq!(short.status(), 422);
    let done = app
        .client
        .post(app.url(&format!("/password-reset/{second}")))
        .form(&[("password", "a brand new password")])
        .send()
        .await
        .expect("request");
    assert_eq!(done.status(), 303);
    // Signed out everywhere; the new password works, the old one does not.
    let (status, _) = app.get_json("/v1/channels", &old_token).await;
    assert_eq!(status, 401);
    assert_eq!(login_status(&app, &ws.admin_email, "a brand new password").await, 200);
    assert_eq!(login_status(&app, &ws.admin_email, &ws.admin_password).await, 401);
    // The used link and the other one are void: 410, nothing changes.
    for t in [&second, &first] {
        assert_eq!(app.get(&format!("/password-reset/{t}")).await.status(), 410);
        let again = app
            .client
            .post(app.url(&format!("/password-reset/{t}")))
            .form(&[("password", "the attacker's try")])
            .send()
            .await
            .expect("request");
        assert_eq!(again.status(), 410);
    }
    assert_eq!(login_status(&app, &ws.admin_email, "a brand new password").await, 200);
    assert_eq!(app.get("/password-reset/wmsu_madeup").await.status(), 410);
}

#[tokio::test]
async fn reset_requests_are_throttled_like_sign_ins() {
    let app = TestApp::spawn().await;
    for _ in 0..5 {
        assert_eq!(ask(&app, "someone@x.test").await.status(), 202);
    }
    let res = ask(&app, "someone@x.test").await;
    assert!(res.headers().contains_key("retry-after"));
    problem(res, 429, "rate_limited").await;
    // Another address from the same client still has its own budget.
    assert_eq!(ask(&app, "someone-else@x.test").await.status(), 202);
}
