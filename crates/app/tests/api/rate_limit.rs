//! The shared `/v1` rate limit: exact across instances, reported on every authenticated response.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use domain::workspace::PlanTier;
use serde_json::json;

use crate::credentials::{admin_token, channels, channels_with, header, sql, sql_bool};
use crate::helpers::{problem, TestApp};

#[tokio::test]
async fn every_authenticated_response_carries_the_headers() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();

    let res = channels(&app, &key).await;
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "ratelimit-policy").as_deref(), Some(r#""hourly";q=1000;w=3600"#));
    assert_eq!(header(&res, "ratelimit").as_deref(), Some(r#""hourly";r=999;t=3600"#), "t never exceeds w");
    assert_eq!(header(&res, "x-ratelimit-limit").as_deref(), Some("1000"));
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("999"));
    let reset: i64 = header(&res, "x-ratelimit-reset").and_then(|v| v.parse().ok()).expect("reset");
    assert!((now + 3599..=now + 3603).contains(&reset), "{reset} vs {now}");

    // Errors of authenticated requests count and carry them too.
    let res = app.authed(reqwest::Method::GET, "/v1/channels/987654", &key).send().await.expect("request");
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("998"));
    problem(res, 404, "not_found").await;
    let res = app.authed(reqwest::Method::GET, "/v1/channels?limit=0", &key).send().await.expect("request");
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("997"));
    problem(res, 422, "validation_failed").await;
    let res = app.authed(reqwest::Method::GET, "/v1/no-such-thing", &key).send().await.expect("request");
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("996"));
    problem(res, 404, "not_found").await;
}

#[tokio::test]
async fn over_the_limit_is_429_with_retry_after() {
    let app = TestApp::spawn_with(|s| s.rate_limit.requests_per_hour = 3).await;
    let (_, key) = app.advanced_with_key().await;
    for remaining in ["2", "1", "0"] {
        let res = channels(&app, &key).await;
        assert_eq!(res.status(), 200);
        assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some(remaining));
    }
    let res = channels(&app, &key).await;
    let retry: u64 = header(&res, "retry-after").and_then(|v| v.parse().ok()).expect("Retry-After");
    assert!((3599..=3601).contains(&retry), "{retry}");
    assert_eq!(header(&res, "ratelimit").as_deref(), Some(format!(r#""hourly";r=0;t={retry}"#).as_str()));
    assert_eq!(header(&res, "ratelimit-policy").as_deref(), Some(r#""hourly";q=3;w=3600"#));
    problem(res, 429, "rate_limited").await;
}

#[tokio::test]
async fn the_window_slides_and_limits_are_per_credential() {
    let app = TestApp::spawn_with(|s| s.rate_limit.requests_per_hour = 2).await;
    let (ws, key) = app.advanced_with_key().await;
    let other = app.api_key(&ws).await;
    for _ in 0..2 {
        assert_eq!(channels(&app, &key).await.status(), 200);
    }
    problem(channels(&app, &key).await, 429, "rate_limited").await;
    assert_eq!(channels(&app, &other).await.status(), 200, "another key has its own window");

    // An hour and a second pass for the first key's admissions (moved back, not waited for).
    sql(&app, "UPDATE rate_limit_seconds SET second = second - 3601").await;
    let res = channels(&app, &key).await;
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("1"));
}

#[tokio::test]
async fn login_tokens_are_limited_like_keys() {
    let app = TestApp::spawn_with(|s| s.rate_limit.requests_per_hour = 2).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let token = admin_token(&app, &ws).await;
    for remaining in ["1", "0"] {
        let res = channels(&app, &token).await;
        assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some(remaining));
    }
    problem(channels(&app, &token).await, 429, "rate_limited").await;
    // Signing out is never held back by the limit.
    let res = app.client.post(app.url("/v1/auth/logout")).bearer_auth(&token).send().await.expect("request");
    assert_eq!(res.status(), 204);
    problem(channels(&app, &token).await, 401, "token_revoked").await;

    // A key's sign-out is refused, counted and answered with its window like any request of it.
    let key = app.api_key(&ws).await;
    let logout = || app.client.post(app.url("/v1/auth/logout")).bearer_auth(&key).send();
    let res = logout().await.expect("request");
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("1"));
    problem(res, 403, "forbidden").await;
    assert_eq!(header(&channels(&app, &key).await, "x-ratelimit-remaining").as_deref(), Some("0"));
    let res = logout().await.expect("request");
    assert!(header(&res, "retry-after").is_some());
    problem(res, 429, "rate_limited").await;
}

#[tokio::test]
async fn two_instances_and_64_clients_admit_exactly_the_limit() {
    exactly_the_limit_across_instances(TestApp::spawn().await).await;
}

/// The same through PgBouncer (docs/contract.md, "Operations at scale") in transaction pooling: 8
/// server connections for both instances' pools (PgBouncer 1.21+ with `max_prepared_statements`,
/// docs/deployment.md, "Prepared statements").
#[tokio::test]
async fn two_instances_behind_pgbouncer_admit_exactly_the_limit() {
    let app = TestApp::spawn_behind_pgbouncer(8, |_| {}).await;
    let app = exactly_the_limit_across_instances(app).await;
    app.assert_transaction_pooling(8);
}

async fn exactly_the_limit_across_instances(app: TestApp) -> TestApp {
    let (_, key) = app.advanced_with_key().await;
    let bases = Arc::new([app.address.clone(), app.spawn_instance()]);
    let sent = Arc::new(AtomicUsize::new(0));
    let admitted = Arc::new(AtomicUsize::new(0));
    let limited = Arc::new(AtomicUsize::new(0));
    let client = reqwest::Client::builder().pool_max_idle_per_host(64).build().expect("client");
    let mut tasks = Vec::new();
    for _ in 0..64 {
        let (bases, sent, admitted, limited, client, key) =
            (bases.clone(), sent.clone(), admitted.clone(), limited.clone(), client.clone(), key.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let n = sent.fetch_add(1, Ordering::SeqCst);
                if n >= 1200 {
                    break;
                }
                let res = client
                    .get(format!("{}/v1/channels", bases[n % 2]))
                    .bearer_auth(&key)
                    .send()
                    .await
                    .expect("request");
                match res.status().as_u16() {
                    200 => admitted.fetch_add(1, Ordering::SeqCst),
                    429 => limited.fetch_add(1, Ordering::SeqCst),
                    other => panic!("unexpected status {other}"),
                };
            }
        }));
    }
    for t in tasks {
        t.await.expect("client task");
    }
    assert_eq!(admitted.load(Ordering::SeqCst), 1000);
    assert_eq!(limited.load(Ordering::SeqCst), 200);
    let res = channels_with(&app, &bases[1], &format!("Bearer {key}")).await;
    problem(res, 429, "rate_limited").await;
    app
}

/// Concurrent requests of one key share database statements (docs/rate-limit.md,
/// "Coalescing"); the headers must still be what one-by-one checks would report: every
/// `remaining` value handed out exactly once, and a `Retry-After` on every refusal.
#[tokio::test]
async fn concurrent_requests_each_get_their_own_remaining_count() {
    let app = TestApp::spawn_with(|s| s.rate_limit.requests_per_hour = 300).await;
    let (_, key) = app.advanced_with_key().await;
    let sent = Arc::new(AtomicUsize::new(0));
    let client = reqwest::Client::builder().pool_max_idle_per_host(64).build().expect("client");
    let mut tasks = Vec::new();
    for _ in 0..64 {
        let (sent, client, key, url) = (sent.clone(), client.clone(), key.clone(), app.url("/v1/channels"));
        tasks.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            while sent.fetch_add(1, Ordering::SeqCst) < 400 {
                let res = client.get(&url).bearer_auth(&key).send().await.expect("request");
                let remaining: u32 =
                    header(&res, "x-ratelimit-remaining").and_then(|v| v.parse().ok()).expect("remaining");
                let retry = header(&res, "retry-after");
                seen.push((res.status().as_u16(), remaining, retry));
            }
            seen
        }));
    }
    let mut admitted = Vec::new();
    let mut limited = 0;
    for t in tasks {
        for (status, remaining, retry) in t.await.expect("client task") {
            match status {
                200 => admitted.push(remaining),
                429 => {
                    assert_eq!(remaining, 0);
                    assert!(retry.is_some_and(|r| r.parse::<u32>().is_ok_and(|r| (3599..=3601).contains(&r))));
                    limited += 1;
                }
                other => panic!("unexpected status {other}"),
            }
        }
    }
    admitted.sort_unstable();
    assert_eq!(admitted, (0..300).collect::<Vec<u32>>());
    assert_eq!(limited, 100);
}

#[tokio::test]
async fn unauthenticated_responses_have_no_rate_headers() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let res = app.get("/v1/channels").await;
    assert!(header(&res, "ratelimit").is_none());
    let res = app.client.post(app.url("/v1/auth/login")).json(&json!({"email": "x@y.z", "password": "p"})).send();
    assert!(header(&res.await.expect("request"), "ratelimit").is_none());
    let res = app.get(&format!("/api/workspaces/{}/api-keys", ws.id)).await;
    assert_eq!(res.status(), 401);
    assert!(header(&res, "ratelimit").is_none());
}

#[tokio::test]
async fn the_login_tokens_of_one_member_share_one_window() {
    let app = TestApp::spawn_with(|s| s.rate_limit.requests_per_hour = 3).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    // Signing in again used to mint a token with a fresh window: the quota multiplied by logins.
    let first = admin_token(&app, &ws).await;
    let second = admin_token(&app, &ws).await;
    assert_ne!(first, second);
    for (token, remaining) in [(&first, "2"), (&second, "1"), (&first, "0")] {
        let res = channels(&app, token).await;
        assert_eq!(res.status(), 200);
        assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some(remaining));
    }
    let third = admin_token(&app, &ws).await;
    for token in [&first, &second, &third] {
        let res = channels(&app, token).await;
        assert!(header(&res, "retry-after").is_some());
        assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("0"));
        problem(res, 429, "rate_limited").await;
    }
    assert!(
        sql_bool(&app, "(SELECT count(*) FROM rate_limit_windows WHERE user_id IS NOT NULL) = 1").await,
        "one window for the member"
    );
    // Another member of the workspace has a window of their own; API keys keep theirs.
    let key = app.api_key(&ws).await;
    assert_eq!(channels(&app, &key).await.status(), 200);
}

#[tokio::test]
async fn the_assistant_endpoints_count_against_the_member_window_and_answer_429() {
    // Five: signing in to the pages reads one page, which counts in the member's window too.
    let app = TestApp::spawn_with(|s| s.rate_limit.requests_per_hour = 5).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let token = admin_token(&app, &ws).await;
    let cookie = crate::pages::sign_in(&app, &ws).await.cookie;
    let capabilities = format!("/workspaces/{}/co-admin/capabilities", ws.id);
    let mcp = format!("/workspaces/{}/co-admin/mcp", ws.id);

    let res = channels(&app, &token).await;
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("3"));
    let res = app.authed(reqwest::Method::GET, &capabilities, &token).send().await.expect("request");
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("2"), "same window as /v1");
    assert_eq!(header(&res, "ratelimit-policy").as_deref(), Some(r#""hourly";q=5;w=3600"#));
    // The settings session is the same member: the same window.
    let res =
        app.client.get(app.url(&capabilities)).header(reqwest::header::COOKIE, &cookie).send().await.expect("request");
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("1"));
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let res = app
        .authed(reqwest::Method::POST, &mcp, &token)
        .header("accept", "application/json, text/event-stream")
        .json(&ping)
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("0"));

    let execute = format!("/workspaces/{}/co-admin/tools/execute", ws.id);
    let refused = [
        app.authed(reqwest::Method::GET, &capabilities, &token).send().await.expect("request"),
        app.client.get(app.url(&capabilities)).header(reqwest::header::COOKIE, &cookie).send().await.expect("request"),
        app.authed(reqwest::Method::POST, &mcp, &token)
            .header("accept", "application/json, text/event-stream")
            .json(&ping)
            .send()
            .await
            .expect("request"),
        app.authed(reqwest::Method::POST, &execute, &token)
            .json(&json!({"tool": "get_workspace_overview", "arguments": {}}))
            .send()
            .await
            .expect("request"),
        channels(&app, &token).await,
    ];
    for res in refused {
        let retry: u64 = header(&res, "retry-after").and_then(|v| v.parse().ok()).expect("Retry-After");
        assert!((3599..=3601).contains(&retry), "{retry}");
        assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("0"));
        assert!(header(&res, "ratelimit").is_some());
        problem(res, 429, "rate_limited").await;
    }
    // Methods an assistant path does not have still answer 405, uncounted.
    let res = app.authed(reqwest::Method::GET, &mcp, &token).send().await.expect("request");
    assert_eq!(res.status(), 405);
}

/// The count inside the window is a difference of running totals: with admissions spread over
/// several seconds, moving some of them out of the hour frees exactly theirs, and `Retry-After`
/// names the second at which the oldest one still counted leaves.
#[tokio::test]
async fn admissions_leave_the_window_second_by_second() {
    let app = TestApp::spawn_with(|s| s.rate_limit.requests_per_hour = 5).await;
    let (_, key) = app.advanced_with_key().await;
    for _ in 0..5 {
        assert_eq!(channels(&app, &key).await.status(), 200);
    }
    problem(channels(&app, &key).await, 429, "rate_limited").await;
    // Spread five admissions over five seconds instead: 3700, 3650, 1000, 500 and 2 seconds ago
    // (the real ones moved a day back).
    sql(&app, "UPDATE rate_limit_seconds SET second = second - 86400").await;
    sql(
        &app,
        "INSERT INTO rate_limit_seconds (window_id, second, admitted, admitted_before)
         SELECT w.id, floor(extract(epoch FROM now()))::bigint - o.ago, 1, 5 + o.before
           FROM rate_limit_windows w, (VALUES (3700, 0), (3650, 1), (1000, 2), (500, 3), (2, 4)) AS o (ago, before)",
    )
    .await;
    assert!(
        sql_bool(
            &app,
            "(SELECT sum(admitted) = 5 FROM rate_limit_seconds WHERE second > extract(epoch FROM now()) - 7200)"
        )
        .await,
        "five seconds of one admission each"
    );
    // Two of the five are older than the hour: two requests are admitted, the third is refused
    // until the one of 1000 seconds ago leaves.
    for remaining in ["1", "0"] {
        let res = channels(&app, &key).await;
        assert_eq!(res.status(), 200);
        assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some(remaining));
    }
    let res = channels(&app, &key).await;
    let retry: u64 = header(&res, "retry-after").and_then(|v| v.parse().ok()).expect("Retry-After");
    assert!((2599..=2602).contains(&retry), "{retry}");
    problem(res, 429, "rate_limited").await;
    assert!(
        sql_bool(&app, "NOT EXISTS (SELECT 1 FROM rate_limit_seconds WHERE second < extract(epoch FROM now()) - 3600)")
            .await,
        "a new second drops the seconds that left the window"
    );
}

/// The admissions of the last hour survive the move from the window row's arrays to rows per
/// second: a key at its limit before the upgrade is still at it after, and what had left the hour
/// is not counted.
#[tokio::test]
async fn the_upgrade_keeps_the_admissions_of_the_hour() {
    let app = TestApp::spawn_with(|s| s.rate_limit.requests_per_hour = 4).await;
    let (_, key) = app.advanced_with_key().await;
    let url = app.database.url.clone();
    crate::helpers::revert_through(&url, "20261130000301").await;
    for remaining in ["3", "2"] {
        let res = channels(&app, &key).await;
        assert_eq!(res.status(), 200, "the schema before it still counts");
        assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some(remaining));
    }
    // Older admissions: five that left the hour, one 1800 seconds ago.
    sql(
        &app,
        "UPDATE rate_limit_windows
            SET bucket_seconds = ARRAY[bucket_seconds[1] - 4000, bucket_seconds[1] - 1800] || bucket_seconds,
                bucket_counts = ARRAY[5, 1] || bucket_counts, total = total + 6",
    )
    .await;
    adapters_postgres::migrate::run_pending(&url).await.expect("migrate again");
    assert!(sql_bool(&app, "(SELECT sum(admitted) = 8 FROM rate_limit_seconds)").await, "the kept seconds are rows");

    let res = channels(&app, &key).await;
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "x-ratelimit-remaining").as_deref(), Some("0"), "1 + 2 carried over, and this one");
    let res = channels(&app, &key).await;
    let retry: u64 = header(&res, "retry-after").and_then(|v| v.parse().ok()).expect("Retry-After");
    assert!((1798..=1802).contains(&retry), "the admission of 1800 s ago leaves first: {retry}");
    problem(res, 429, "rate_limited").await;
}
