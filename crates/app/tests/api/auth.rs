//! Bearer authentication on `/v1`, sign-in and sign-out.

use std::time::{Duration, Instant};

use domain::workspace::PlanTier;
use serde_json::{json, Value};

use crate::credentials::{
    add_member, admin_token, channels, channels_with, create_key, header, login_raw, set_plan, sql, token_for,
};
use crate::helpers::{error_fields, problem, TestApp};

const BEARER: &str = r#"Bearer realm="wms""#;
const BEARER_INVALID: &str = r#"Bearer realm="wms", error="invalid_token""#;

/// A well-formed key with a valid checksum that no workspace has.
fn unknown_key() -> String {
    domain::auth::NewToken::generate(domain::auth::TokenKind::ApiKey, &app::platform::OsRandom).secret
}

#[tokio::test]
async fn missing_credentials_are_unauthenticated() {
    let app = TestApp::spawn().await;
    let res = app.get("/v1/channels").await;
    assert_eq!(header(&res, "www-authenticate").as_deref(), Some(BEARER));
    assert!(header(&res, "ratelimit").is_none());
    problem(res, 401, "unauthenticated").await;
}

#[tokio::test]
async fn a_key_in_the_query_string_is_never_accepted() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    for query in [format!("api_key={key}"), format!("access_token={key}"), format!("key={key}&token={key}")] {
        problem(app.get(&format!("/v1/channels?{query}")).await, 401, "unauthenticated").await;
    }
}

#[tokio::test]
async fn wrong_scheme_and_malformed_tokens_are_invalid_token() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let mut typo: Vec<char> = key.chars().collect();
    typo[12] = if typo[12] == 'x' { 'y' } else { 'x' };
    let typo: String = typo.into_iter().collect();
    for value in [
        format!("Basic {key}"),
        format!("Token {key}"),
        key.clone(),
        "Bearer".to_owned(),
        "Bearer wmsk_tooShort".to_owned(),
        format!("Bearer {key}x"),
        format!("Bearer sk_live_{}", &key[5..]),
        format!("Bearer {typo}"),
        format!("Bearer {}", unknown_key()),
    ] {
        let res = channels_with(&app, &app.address, &value).await;
        assert_eq!(header(&res, "www-authenticate").as_deref(), Some(BEARER_INVALID), "{value}");
        problem(res, 401, "invalid_token").await;
    }
}

#[tokio::test]
async fn the_scheme_word_is_case_insensitive() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let res = channels_with(&app, &app.address, &format!("{scheme} {key}")).await;
        assert_eq!(res.status(), 200, "{scheme}");
    }
}

#[tokio::test]
async fn a_bad_checksum_is_refused_without_a_database_query() {
    let app = TestApp::spawn().await;
    // A server whose database is unreachable: anything that queried it would fail with a 5xx.
    let db =
        adapters_postgres::Db::new("postgres://nobody@127.0.0.1:1/none", 1, Duration::from_millis(300)).expect("pool");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(
        app::wiring::server(&app.settings, &db, app::wiring::state(&app.settings, &db), listener).expect("server"),
    );

    let good = unknown_key();
    let mut typo: Vec<char> = good.chars().collect();
    typo[20] = if typo[20] == 'Q' { 'R' } else { 'Q' };
    let typo: String = typo.into_iter().collect();
    problem(channels_with(&app, &base, &format!("Bearer {typo}")).await, 401, "invalid_token").await;
    // The same key with its checksum intact does reach the (dead) database.
    let res = channels_with(&app, &base, &format!("Bearer {good}")).await;
    assert!(res.status().is_server_error());
}

#[tokio::test]
async fn sign_in_returns_a_token_that_authenticates_v1_and_expires_after_the_ttl() {
    let app = TestApp::spawn_with(|s| s.auth.token_ttl_hours = 2).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let before = time::OffsetDateTime::now_utc();
    let res = login_raw(&app, &json!({"email": ws.admin_email.to_uppercase(), "password": ws.admin_password})).await;
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "cache-control").as_deref(), Some("no-store"));
    let body: Value = res.json().await.expect("json");
    let token = body["token"].as_str().expect("token");
    assert!(token.starts_with("wmsu_") && token.len() >= 45);
    assert!(token[5..].chars().all(|c| c.is_ascii_alphanumeric()));
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["workspace_id"], ws.id);
    assert_eq!(body["user"]["id"], ws.admin_id);
    assert_eq!(body["user"]["email"], ws.admin_email);
    assert_eq!(body["user"]["role"], "admin");
    let expires = time::OffsetDateTime::parse(
        body["expires_at"].as_str().expect("expires_at"),
        &time::format_description::well_known::Rfc3339,
    )
    .expect("rfc3339");
    let ttl = expires - before;
    assert!(ttl > time::Duration::minutes(119) && ttl < time::Duration::minutes(121), "{ttl}");

    assert_eq!(channels(&app, token).await.status(), 200);
    // Stored as a digest only.
    assert!(
        crate::credentials::sql_bool(
            &app,
            &format!("NOT EXISTS (SELECT 1 FROM user_tokens t WHERE row_to_json(t)::text LIKE '%{}%')", &token[5..])
        )
        .await
    );

    sql(&app, "UPDATE user_tokens SET expires_at = now() - interval '1 second'").await;
    let res = channels(&app, token).await;
    assert_eq!(header(&res, "www-authenticate").as_deref(), Some(BEARER_INVALID));
    problem(res, 401, "token_expired").await;
}

#[tokio::test]
async fn wrong_password_and_unknown_email_answer_the_same_in_similar_time() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let mut wrong_times = Vec::new();
    let mut unknown_times = Vec::new();
    let mut bodies = Vec::new();
    for i in 0..5 {
        let started = Instant::now();
        let res = login_raw(&app, &json!({"email": ws.admin_email, "password": format!("wrong password {i}")})).await;
        wrong_times.push(started.elapsed());
        assert_eq!(header(&res, "www-authenticate").as_deref(), Some(BEARER));
        bodies.push(problem(res, 401, "invalid_credentials").await);

        let started = Instant::now();
        let res = login_raw(&app, &json!({"email": format!("nobody{i}@test.wms"), "password": "wrong password"})).await;
        unknown_times.push(started.elapsed());
        bodies.push(problem(res, 401, "invalid_credentials").await);
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]), "identical bodies");
    wrong_times.sort();
    unknown_times.sort();
    let (wrong, unknown) = (wrong_times[2].as_secs_f64(), unknown_times[2].as_secs_f64());
    // Both run one argon2id verification; without the dummy hash the unknown e-mail would answer
    // in a few hundredths of the time (a lookup against an ~80 ms hash). The medians of five are
    // compared with room for a machine busy with the rest of the suite (seen: 0.178 s against
    // 0.085 s for the medians of three).
    assert!(unknown > wrong * 0.3 && unknown < wrong * 3.3, "wrong password {wrong:.3}s, unknown e-mail {unknown:.3}s");
}

#[tokio::test]
async fn repeated_failures_for_one_email_are_throttled_even_with_the_right_password() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    for _ in 0..5 {
        let res = login_raw(&app, &json!({"email": ws.admin_email, "password": "not the password"})).await;
        problem(res, 401, "invalid_credentials").await;
    }
    let res = login_raw(&app, &json!({"email": ws.admin_email, "password": ws.admin_password})).await;
    let retry: u64 = header(&res, "retry-after").and_then(|v| v.parse().ok()).expect("Retry-After");
    assert!(retry > 0 && retry <= 900, "{retry}");
    problem(res, 429, "rate_limited").await;
    // Another account from the same client is not locked out by it.
    let other = app.create_workspace(PlanTier::Advanced).await;
    assert_eq!(admin_token(&app, &other).await.len(), 54);
}

#[tokio::test]
async fn repeated_failures_from_one_client_are_throttled() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    for i in 0..50 {
        let res = login_raw(&app, &json!({"email": format!("guess{i}@test.wms"), "password": "guess"})).await;
        assert_eq!(res.status(), 401);
    }
    let res = login_raw(&app, &json!({"email": ws.admin_email, "password": ws.admin_password})).await;
    problem(res, 429, "rate_limited").await;
}

#[tokio::test]
async fn a_member_of_several_workspaces_chooses_one() {
    let app = TestApp::spawn().await;
    let first = app.create_workspace(PlanTier::Advanced).await;
    // The same admin e-mail for a second workspace reuses the user (and their password).
    let second = app::wiring::workspace_service(&app.db)
        .create(domain::workspace::CreateWorkspace {
            name: "Second".into(),
            plan: PlanTier::Growth,
            admin_email: first.admin_email.clone(),
            admin_password: "ignored for an existing user".into(),
            admin_name: None,
        })
        .await
        .expect("second workspace");
    let creds = json!({"email": first.admin_email, "password": first.admin_password});
    let body = problem(login_raw(&app, &creds).await, 422, "validation_failed").await;
    assert_eq!(error_fields(&body), ["workspace_id"]);

    let token = token_for(&app, &first.admin_email, &first.admin_password, Some(second.workspace_id.0)).await;
    // The token is bound to the growth workspace: /v1 answers plan_required.
    problem(channels(&app, &token).await, 403, "plan_required").await;
    let token = token_for(&app, &first.admin_email, &first.admin_password, Some(first.id)).await;
    assert_eq!(channels(&app, &token).await.status(), 200);

    let stranger = app.create_workspace(PlanTier::Advanced).await;
    let res = login_raw(
        &app,
        &json!({"email": first.admin_email, "password": first.admin_password, "workspace_id": stranger.id}),
    )
    .await;
    // Named where the account is no active member: as a wrong password (it tells nothing).
    problem(res, 401, "invalid_credentials").await;
}

#[tokio::test]
async fn bad_sign_in_input_is_named() {
    let app = TestApp::spawn().await;
    for (body, fields) in [
        (json!({"password": "x"}), vec!["email"]),
        (json!({"email": "a@b.c"}), vec!["password"]),
        (json!({"email": "", "password": ""}), vec!["email", "password"]),
        (json!({"email": "not-an-email", "password": "x"}), vec!["email"]),
        (json!({"email": 5, "password": "x"}), vec!["email"]),
        (json!({"email": "a@b.c", "password": "x", "workspace_id": "one"}), vec!["workspace_id"]),
        (json!({"email": "a@b.c", "password": "x", "remember": true}), vec!["remember"]),
    ] {
        let res = login_raw(&app, &body).await;
        assert_eq!(error_fields(&problem(res, 422, "validation_failed").await), fields, "{body}");
    }
    let res =
        app.client.post(app.url("/v1/auth/login")).body("{").header("content-type", "application/json").send().await;
    assert_eq!(res.expect("request").status(), 400);
    let res = app.client.post(app.url("/v1/auth/login")).body("email=a").send().await.expect("request");
    problem(res, 415, "unsupported_media_type").await;
}

#[tokio::test]
async fn sign_out_revokes_the_token_everywhere() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let token = admin_token(&app, &ws).await;
    let other = app.spawn_instance();
    assert_eq!(channels_with(&app, &other, &format!("Bearer {token}")).await.status(), 200);

    let res = app.client.post(app.url("/v1/auth/logout")).bearer_auth(&token).send().await.expect("request");
    assert_eq!(res.status(), 204);
    assert!(header(&res, "ratelimit").is_some());

    problem(channels_with(&app, &other, &format!("Bearer {token}")).await, 401, "token_revoked").await;
    let again = app.client.post(app.url("/v1/auth/logout")).bearer_auth(&token).send().await.expect("request");
    problem(again, 401, "token_revoked").await;
    // The other tokens of the same user keep working.
    assert_eq!(channels(&app, &admin_token(&app, &ws).await).await.status(), 200);
}

#[tokio::test]
async fn sign_out_works_below_advanced_and_refuses_keys_and_missing_tokens() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Starter).await;
    let token = admin_token(&app, &ws).await;
    problem(channels(&app, &token).await, 403, "plan_required").await;
    let res = app.client.post(app.url("/v1/auth/logout")).bearer_auth(&token).send().await.expect("request");
    assert_eq!(res.status(), 204);

    let (_, key) = app.advanced_with_key().await;
    let res = app.client.post(app.url("/v1/auth/logout")).bearer_auth(&key).send().await.expect("request");
    problem(res, 403, "forbidden").await;
    let res = app.client.post(app.url("/v1/auth/logout")).send().await.expect("request");
    problem(res, 401, "unauthenticated").await;
}

#[tokio::test]
async fn a_deactivated_member_loses_their_tokens() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let (email, password) = add_member(&app, ws.id, "agent").await;
    let token = token_for(&app, &email, &password, None).await;
    assert_eq!(channels(&app, &token).await.status(), 200);
    sql(
        &app,
        &format!(
            "UPDATE workspace_members SET status = 'deactivated' WHERE workspace_id = {} AND role = 'agent'",
            ws.id
        ),
    )
    .await;
    problem(channels(&app, &token).await, 401, "token_revoked").await;
    // And cannot sign in to that workspace any more.
    problem(login_raw(&app, &json!({"email": email, "password": password})).await, 403, "forbidden").await;
}

#[tokio::test]
async fn a_key_of_a_downgraded_workspace_is_plan_required() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let (key, _) = create_key(&app, &ws, &json!({"name": "ci"})).await;
    assert_eq!(channels(&app, &key).await.status(), 200);
    for plan in [PlanTier::Growth, PlanTier::Starter, PlanTier::Free] {
        set_plan(&app, ws.id, plan).await;
        let res = channels(&app, &key).await;
        assert!(header(&res, "ratelimit-policy").is_some(), "authenticated responses carry the headers");
        problem(res, 403, "plan_required").await;
    }
    set_plan(&app, ws.id, PlanTier::Advanced).await;
    assert_eq!(channels(&app, &key).await.status(), 200);
}

#[tokio::test]
async fn the_sign_in_answer_names_the_member_as_their_workspace_does() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let token = crate::credentials::admin_token(&app, &ws).await;
    let res = app
        .authed(reqwest::Method::PATCH, &format!("/v1/users/{}", ws.admin_id), &token)
        .json(&json!({"name": "Boss Here"}))
        .send()
        .await
        .expect("rename");
    assert_eq!(res.status(), 200);
    let res =
        login_raw(&app, &json!({"email": ws.admin_email, "password": ws.admin_password, "workspace_id": ws.id})).await;
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["user"]["name"], "Boss Here", "{body}");
    let (_, listed) = app.get_json(&format!("/v1/users/{}", ws.admin_id), &token).await;
    assert_eq!(listed["name"], body["user"]["name"]);
}
