//! Sign-in floods (`docs/contract.md`, "Abuse limits"): the budget is reserved before hashing, so concurrent
//! guesses cannot outrun it; failures from one address never lock the owner out from another; a
//! refused attempt neither counts nor extends the window; `next` stays on this site.

use std::net::IpAddr;

use domain::workspace::PlanTier;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use serde_json::json;

use crate::credentials::header;
use crate::helpers::{problem, TestApp};
use crate::pages::csrf_of;

/// A client whose connections come from `ip` (any 127.0.0.0/8 address is this host's loopback).
fn client_from(ip: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::from(ip))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

async fn login(app: &TestApp, client: &reqwest::Client, email: &str, password: &str) -> reqwest::Response {
    client
        .post(app.url("/v1/auth/login"))
        .json(&json!({"email": email, "password": password}))
        .send()
        .await
        .expect("request")
}

/// `(subject, failures kept)` of the throttle, sorted.
async fn throttle_rows(app: &TestApp) -> Vec<(String, i32)> {
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Text)]
        subject: String,
        #[diesel(sql_type = diesel::sql_types::Integer)]
        failures: i32,
    }
    let mut conn = app.db.conn().await.expect("conn");
    let rows: Vec<Row> =
        diesel::sql_query("SELECT subject, cardinality(failed_at) AS failures FROM login_throttle ORDER BY subject")
            .load(&mut conn)
            .await
            .expect("rows");
    rows.into_iter().map(|r| (r.subject, r.failures)).collect()
}

#[tokio::test]
async fn concurrent_wrong_sign_ins_for_one_email_pass_the_check_at_most_five_times() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let client = client_from([127, 0, 0, 1]);
    let attempts = (0..60).map(|_| login(&app, &client, &ws.admin_email, "not the password"));
    let answers = futures_util::future::join_all(attempts).await;
    let mut statuses: Vec<u16> = answers.iter().map(|r| r.status().as_u16()).collect();
    statuses.sort_unstable();
    assert_eq!(statuses.iter().filter(|s| **s == 401).count(), 5, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 55, "{statuses:?}");
    for res in answers.into_iter().filter(|r| r.status() == 429) {
        let retry: u64 = header(&res, "retry-after").and_then(|v| v.parse().ok()).expect("Retry-After");
        assert!((1..=900).contains(&retry), "{retry}");
        problem(res, 429, "rate_limited").await;
    }
    // Only the five that were checked count, against the e-mail from this address and the address.
    assert_eq!(
        throttle_rows(&app).await,
        [(format!("email:ip:127.0.0.1 {}", ws.admin_email), 5), ("ip:127.0.0.1".to_owned(), 5)]
    );
}

#[tokio::test]
async fn failures_from_one_address_never_lock_the_owner_out_from_another() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let attacker = client_from([127, 0, 0, 1]);
    for _ in 0..5 {
        problem(login(&app, &attacker, &ws.admin_email, "guess").await, 401, "invalid_credentials").await;
    }
    problem(login(&app, &attacker, &ws.admin_email, &ws.admin_password).await, 429, "rate_limited").await;
    let owner = client_from([127, 0, 0, 2]);
    let res = login(&app, &owner, &ws.admin_email, &ws.admin_password).await;
    assert_eq!(res.status(), 200, "the owner signs in from elsewhere");
    // The success gave back the owner's reservation: nothing is left counted against 127.0.0.2.
    let rows = throttle_rows(&app).await;
    assert!(rows.iter().all(|(s, _)| !s.contains("127.0.0.2")), "{rows:?}");
}

/// Five wrong passwords for the admin from 127.0.0.1, then the failures' times rewritten by
/// `failed_at` (an SQL array expression), as if they had happened then.
async fn five_failures_at(app: &TestApp, ws: &crate::helpers::TestWorkspace, failed_at: &str) -> reqwest::Client {
    let client = client_from([127, 0, 0, 1]);
    for _ in 0..5 {
        assert_eq!(login(app, &client, &ws.admin_email, "guess").await.status(), 401);
    }
    crate::credentials::sql(app, &format!("UPDATE login_throttle SET failed_at = {failed_at}")).await;
    client
}

/// A refusal's `Retry-After`, in seconds, once checked to be 429 `rate_limited`.
async fn refused_for(res: reqwest::Response) -> u64 {
    let retry: u64 = header(&res, "retry-after").and_then(|v| v.parse().ok()).expect("Retry-After");
    problem(res, 429, "rate_limited").await;
    retry
}

#[tokio::test]
async fn a_refused_attempt_neither_counts_nor_extends_the_window() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    // The failures leave the window in a few seconds.
    let client = five_failures_at(
        &app,
        &ws,
        "array_fill(now() - interval '14 minutes 57 seconds', ARRAY[cardinality(failed_at)])",
    )
    .await;
    let before = throttle_rows(&app).await;
    let mut last = 0;
    for _ in 0..3 {
        let retry = refused_for(login(&app, &client, &ws.admin_email, &ws.admin_password).await).await;
        assert!(retry <= 4, "the window was extended: {retry}");
        last = retry;
    }
    assert_eq!(throttle_rows(&app).await, before, "a refused attempt wrote nothing");
    // Once the window is over, the owner signs in again from the same address (the refusals the
    // process remembers end with the window too).
    tokio::time::sleep(std::time::Duration::from_secs(last + 1)).await;
    assert_eq!(login(&app, &client, &ws.admin_email, &ws.admin_password).await.status(), 200);
}

#[tokio::test]
async fn the_window_slides_so_no_fifteen_minutes_hold_more_than_five_failures() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    // The first failure nearly 15 minutes ago, the four others a minute ago: counted from the
    // first failure, the window would end in a few seconds and five more guesses would pass.
    let failed_at =
        "ARRAY[now() - interval '14 minutes 57 seconds'] || array_fill(now() - interval '1 minute', ARRAY[4])";
    let client = five_failures_at(&app, &ws, failed_at).await;
    let retry = refused_for(login(&app, &client, &ws.admin_email, "guess").await).await;
    assert!(retry <= 4, "{retry}");
    tokio::time::sleep(std::time::Duration::from_secs(retry + 1)).await;
    // One failure has left the window: one more guess, then refused until the next leaves it.
    assert_eq!(login(&app, &client, &ws.admin_email, "guess").await.status(), 401);
    let retry = refused_for(login(&app, &client, &ws.admin_email, &ws.admin_password).await).await;
    assert!((13 * 60..=14 * 60).contains(&retry), "{retry}");
}

#[tokio::test]
async fn fifty_failures_from_one_address_close_it_for_every_email() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let client = client_from([127, 0, 0, 1]);
    let guesses = (0..60).map(|i| {
        let client = client.clone();
        let email = format!("guess{i}@test.wms");
        let app = &app;
        async move { login(app, &client, &email, "guess").await.status().as_u16() }
    });
    let statuses = futures_util::future::join_all(guesses).await;
    assert_eq!(statuses.iter().filter(|s| **s == 401).count(), 50, "{statuses:?}");
    problem(login(&app, &client, &ws.admin_email, &ws.admin_password).await, 429, "rate_limited").await;
    assert_eq!(login(&app, &client_from([127, 0, 0, 3]), &ws.admin_email, &ws.admin_password).await.status(), 200);
}

/// Submits the sign-in form with `next` from `client`.
async fn submit_form(
    app: &TestApp,
    client: &reqwest::Client,
    email: &str,
    password: &str,
    next: &str,
) -> reqwest::Response {
    let page = client.get(app.url("/login")).send().await.expect("page");
    let cookie = page
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("wms_presession_csrf="))
        .and_then(|v| v.split(';').next())
        .expect("csrf cookie")
        .to_owned();
    let token = csrf_of(&page.text().await.expect("html"));
    client
        .post(app.url("/login"))
        .header(COOKIE, cookie)
        .form(&[("csrf_token", token.as_str()), ("email", email), ("password", password), ("next", next)])
        .send()
        .await
        .expect("request")
}

#[tokio::test]
async fn the_sign_in_page_shares_the_budget_under_concurrency() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let client = client_from([127, 0, 0, 1]);
    let attempts = (0..20).map(|_| submit_form(&app, &client, &ws.admin_email, "guess", ""));
    let statuses: Vec<u16> =
        futures_util::future::join_all(attempts).await.iter().map(|r| r.status().as_u16()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == 401).count(), 5, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 15, "{statuses:?}");
    // The API is closed for this e-mail from this address too, and open from another.
    problem(login(&app, &client, &ws.admin_email, &ws.admin_password).await, 429, "rate_limited").await;
    let res = submit_form(&app, &client_from([127, 0, 0, 2]), &ws.admin_email, &ws.admin_password, "").await;
    assert_eq!(res.status(), 303);
}

#[tokio::test]
async fn next_sends_people_only_to_paths_of_this_site() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let client = client_from([127, 0, 0, 1]);
    let home = "/";
    for (next, expected) in [
        ("/%09/evil.example", home),
        ("/\t/evil.example", home),
        ("//evil.example", home),
        ("/\\evil.example", home),
        ("/%5C%5Cevil.example", home),
        ("/%2F%2Fevil.example", home),
        ("https://evil.example/", home),
        ("/settings/workspace/webhooks?x=1", "/settings/workspace/webhooks?x=1"),
    ] {
        let res = submit_form(&app, &client, &ws.admin_email, &ws.admin_password, next).await;
        assert_eq!(res.status(), 303, "{next:?}");
        assert_eq!(res.headers().get(LOCATION).and_then(|v| v.to_str().ok()), Some(expected), "{next:?}");
    }
    // The form itself never carries a refused `next` forward.
    let page = client.get(app.url("/login?next=/%09/evil.example")).send().await.expect("page");
    let html = page.text().await.expect("html");
    assert!(html.contains(&format!("name=\"next\" value=\"{home}\"")), "{html}");
}

#[tokio::test]
async fn a_right_password_forgets_the_emails_failures_and_gives_the_network_its_attempt_back() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let client = client_from([127, 0, 0, 3]);
    for _ in 0..3 {
        problem(login(&app, &client, &ws.admin_email, "a wrong guess").await, 401, "invalid_credentials").await;
    }
    assert_eq!(login(&app, &client, &ws.admin_email, &ws.admin_password).await.status(), 200);
    // Four reserved from the network, one given back; the e-mail from it starts afresh.
    assert_eq!(throttle_rows(&app).await, [("ip:127.0.0.3".to_owned(), 3)]);
}

/// Failures counted before the throttle kept their times still count after the upgrade, each
/// dated at the start of its window: refused as before until that window would have ended.
#[tokio::test]
async fn failures_counted_before_the_sliding_window_still_count_after_the_upgrade() {
    use domain::auth::{LoginThrottleStore, ThrottlePolicy, ThrottleSubject};
    let (database, db, mut conn) = crate::helpers::filled_before(
        "20261202000101",
        &["INSERT INTO login_throttle (subject, failures, window_started_at) VALUES \
             ('email:ip:10.0.0.1 ann@example.com', 5, now() - interval '10 minutes'), \
             ('ip:10.0.0.2', 120, now() - interval '1 minute'), \
             ('callback:ip:10.0.0.3', 3, now() - interval '2 days')"],
    )
    .await;
    adapters_postgres::migrate::run_pending(&database.url).await.expect("migrate");
    #[derive(diesel::QueryableByName, Debug, PartialEq)]
    struct Kept {
        #[diesel(sql_type = diesel::sql_types::Text)]
        subject: String,
        #[diesel(sql_type = diesel::sql_types::Integer)]
        kept: i32,
        #[diesel(sql_type = diesel::sql_types::Bool)]
        dated: bool,
    }
    let kept: Vec<Kept> = diesel_async::RunQueryDsl::load(
        diesel::sql_query(
            "SELECT subject, cardinality(failed_at) AS kept, \
                    failed_at[1] = last_failed_at AND failed_at[cardinality(failed_at)] = last_failed_at AS dated \
             FROM login_throttle ORDER BY subject",
        ),
        &mut conn,
    )
    .await
    .expect("rows");
    let kept: Vec<(&str, i32, bool)> = kept.iter().map(|k| (k.subject.as_str(), k.kept, k.dated)).collect();
    assert_eq!(
        kept,
        [("callback:ip:10.0.0.3", 3, true), ("email:ip:10.0.0.1 ann@example.com", 5, true), ("ip:10.0.0.2", 50, true)]
    );
    let throttle = adapters_postgres::credentials::PgLoginThrottle::new(db);
    let now = time::OffsetDateTime::now_utc();
    let policy = ThrottlePolicy::default();
    let pair = [ThrottleSubject::from_stored("email:ip:10.0.0.1 ann@example.com".to_owned())];
    let retry = throttle.reserve(&pair, now, policy).await.expect("reserve").expect("still refused");
    assert!((4 * 60..=5 * 60).contains(&retry), "{retry}");
    let network = [ThrottleSubject::from_stored("ip:10.0.0.2".to_owned())];
    let retry = throttle.reserve(&network, now, policy).await.expect("reserve").expect("still refused");
    assert!((13 * 60..=14 * 60).contains(&retry), "{retry}");
    // A subject whose failures are long over may try again (and its row is cleaned up).
    let old = [ThrottleSubject::from_stored("callback:ip:10.0.0.3".to_owned())];
    assert_eq!(throttle.reserve(&old, now, policy).await.expect("reserve"), None);
}
