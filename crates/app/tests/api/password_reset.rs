//! Password reset by e-mailed link, which only the address's owner can use: the same 202 for every address, a one-hour link to
//! the address only, a new password that signs the account out everywhere and voids its other
//! links, and the sign-in throttle's budgets.

use serde_json::json;

use crate::credentials::{admin_token, sql_bool};
use crate::helpers::{error_fields, problem, TestApp};
use crate::pages::{form_token, submit_form};

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

    let path = format!("/password-reset/{second}");
    let form = form_token(&app, &path).await;
    let short = form.post(&app, &path, &[("password", "short")]).send().await.expect("request");
    assert_eq!(short.status(), 422);
    let done = form.post(&app, &path, &[("password", "a brand new password")]).send().await.expect("request");
    assert_eq!(done.status(), 303);
    // Signed out everywhere; the new password works, the old one does not.
    let (status, _) = app.get_json("/v1/channels", &old_token).await;
    assert_eq!(status, 401);
    assert_eq!(login_status(&app, &ws.admin_email, "a brand new password").await, 200);
    assert_eq!(login_status(&app, &ws.admin_email, &ws.admin_password).await, 401);
    // The used link and the other one are void: 410, nothing changes.
    for t in [&second, &first] {
        assert_eq!(app.get(&format!("/password-reset/{t}")).await.status(), 410);
        let again =
            form.post(&app, &format!("/password-reset/{t}"), &[("password", "the attacker's try")]).send().await;
        assert_eq!(again.expect("request").status(), 410);
    }
    assert_eq!(login_status(&app, &ws.admin_email, "a brand new password").await, 200);
    assert_eq!(app.get("/password-reset/wmsu_madeup").await.status(), 410);
}

/// Setting a new password revokes every settings session of the account, not only its user tokens.
#[tokio::test]
async fn a_new_password_signs_the_account_out_of_its_settings_sessions() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let browser = crate::pages::sign_in(&app, &ws).await;
    assert_eq!(browser.get(&app, "/settings/workspace/members").await.status(), 200);
    assert_eq!(ask(&app, &ws.admin_email).await.status(), 202);
    let path = format!("/password-reset/{}", sink.token_for(&ws.admin_email, "password-reset", 0).await);
    let form = form_token(&app, &path).await;
    let done = form.post(&app, &path, &[("password", "a brand new password")]).send().await.expect("request");
    assert_eq!(done.status(), 303);
    let after = browser.get(&app, "/settings/workspace/members").await;
    assert_eq!(after.status(), 303, "signed out");
    assert!(after.headers()["location"].to_str().expect("ascii").starts_with("/login"));
}

/// Only an account that has a password gets a reset link: an invited person who has not chosen
/// one yet gets the same 202 and no link (nor any other mail than the invitation).
#[tokio::test]
async fn an_account_without_a_password_gets_no_reset_link() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let invite = json!({"email": "pending@example.com", "role": "agent"});
    assert_eq!(app.post_json("/v1/users", &admin_token(&app, &ws).await, &invite).await.status(), 201);
    assert_eq!(ask(&app, "pending@example.com").await.status(), 202);
    assert_eq!(ask(&app, &ws.admin_email).await.status(), 202);
    let links_to = |email: &str| {
        format!(
            "(SELECT count(*) FROM password_resets r JOIN users u ON u.id = r.user_id WHERE u.email = '{email}') \
             + (SELECT count(*) FROM mail_outbox WHERE recipient = '{email}' AND body_text LIKE '%/password-reset/%')"
        )
    };
    assert!(sql_bool(&app, &format!("{} = 0", links_to("pending@example.com"))).await, "no link without a password");
    assert!(sql_bool(&app, &format!("{} = 2", links_to(&ws.admin_email))).await, "a link with one");
    assert!(sql_bool(&app, "(SELECT count(*) FROM mail_outbox WHERE recipient = 'pending@example.com') = 1").await);
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
    // The page's form counts against the same budget and answers alike.
    let page = submit_form(&app, "/password-reset", &[("email", "someone@x.test")]).await;
    assert_eq!(page.status(), 429);
    let wait: u64 = page.headers()["retry-after"].to_str().expect("ascii").parse().expect("seconds");
    assert!((1..=900).contains(&wait), "{wait}");
}

/// Both reset forms are pre-session forms: another site's form cannot ask for links to an
/// address, nor choose the password through a link it learnt.
#[tokio::test]
async fn the_reset_forms_refuse_a_post_without_their_token_and_change_nothing() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let ask_form = form_token(&app, "/password-reset").await;
    let email = [("email", ws.admin_email.as_str())];
    let forged = [
        app.client.post(app.url("/password-reset")).form(&email),
        app.client.post(app.url("/password-reset")).header("cookie", &ask_form.cookie).form(&email),
        app.client
            .post(app.url("/password-reset"))
            .header("cookie", &ask_form.cookie)
            .form(&[("csrf_token", "AAAA"), email[0]]),
        app.client.post(app.url("/password-reset")).form(&[("csrf_token", ask_form.csrf.as_str()), email[0]]),
    ];
    for post in forged {
        let res = post.send().await.expect("request");
        assert_eq!(res.status(), 403);
        assert!(res.headers()["content-type"].to_str().unwrap_or("").starts_with("text/html"));
    }
    assert!(!crate::credentials::sql_bool(&app, "EXISTS (SELECT 1 FROM mail_outbox)").await, "no link was sent");
    // The real form sends the link.
    let asked = submit_form(&app, "/password-reset", &email).await;
    assert_eq!(asked.status(), 200);
    assert!(asked.text().await.expect("html").contains("Check your e-mail"));
    let link = sink.token_for(&ws.admin_email, "password-reset", 0).await;

    let path = format!("/password-reset/{link}");
    let form = form_token(&app, &path).await;
    let new = [("password", "a password from elsewhere")];
    for post in [
        app.client.post(app.url(&path)).form(&new),
        app.client.post(app.url(&path)).header("cookie", &form.cookie).form(&[("csrf_token", "AAAA"), new[0]]),
        app.client
            .post(app.url(&path))
            .header("cookie", &ask_form.cookie)
            .form(&[("csrf_token", form.csrf.as_str()), new[0]]),
    ] {
        assert_eq!(post.send().await.expect("request").status(), 403);
    }
    // The password is unchanged and the link still works, once, through its form.
    assert_eq!(login_status(&app, &ws.admin_email, "a password from elsewhere").await, 401);
    assert_eq!(login_status(&app, &ws.admin_email, &ws.admin_password).await, 200);
    let done = form.post(&app, &path, &[("password", "the owner's new password")]).send().await.expect("request");
    assert_eq!(done.status(), 303);
    let cleared = done.headers().get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()).any(|v| {
        v.starts_with("wms_presession_csrf=;") && v.contains("Path=/password-reset") && v.contains("Max-Age=0")
    });
    assert!(cleared, "the form's cookie is removed on its path");
    assert_eq!(login_status(&app, &ws.admin_email, "the owner's new password").await, 200);
}

#[tokio::test]
async fn one_reset_link_submitted_twice_at_once_sets_one_password() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    assert_eq!(ask(&app, &ws.admin_email).await.status(), 202);
    let token = sink.token_for(&ws.admin_email, "password-reset", 0).await;
    let path = format!("/password-reset/{token}");
    let statuses =
        crate::pages::submit_twice_at_once(&app, &path, ["the first new password", "the second new password"]).await;
    assert_eq!(statuses, [303, 410], "the link works once");
    let works = [
        login_status(&app, &ws.admin_email, "the first new password").await,
        login_status(&app, &ws.admin_email, "the second new password").await,
    ];
    assert_eq!(works.iter().filter(|s| **s == 200).count(), 1, "{works:?}");
    assert_eq!(login_status(&app, &ws.admin_email, &ws.admin_password).await, 401);
}

/// The statuses the spawned requests were answered with, sorted.
pub(crate) async fn sorted_statuses<const N: usize>(
    handles: [tokio::task::JoinHandle<reqwest::Result<reqwest::Response>>; N],
) -> Vec<u16> {
    let mut statuses = Vec::new();
    for h in handles {
        statuses.push(h.await.expect("task").expect("request").status().as_u16());
    }
    statuses.sort_unstable();
    statuses
}

/// Waits until `n` backends of the test's database wait for a lock (at most 20 s).
pub(crate) async fn until_waiting(app: &TestApp, n: i64) {
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let q =
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let mut conn = app.db.conn().await.expect("conn");
        let waiting = diesel::sql_query(q).get_result::<N>(&mut conn).await.expect("count").n;
        if waiting >= n || std::time::Instant::now() > deadline {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Runs `during` while the account with `email` is held (its `users` row locked, as a change of
/// its password locks it), then lets go: what `during` starts reaches its locks before any of it
/// can finish.
pub(crate) async fn with_account_held<T: Send>(
    app: &TestApp,
    email: &str,
    during: impl std::future::Future<Output = T> + Send,
) -> T {
    let lock = format!("SELECT id FROM users WHERE email = '{}' FOR UPDATE", email.replace('\'', "''"));
    while_locked(app, &lock, during).await
}

/// Runs `during` inside a transaction that first ran `lock` (a statement taking row locks), then
/// commits: what `during` starts and waits for those rows goes on once it has finished.
pub(crate) async fn while_locked<T: Send>(
    app: &TestApp,
    lock: &str,
    during: impl std::future::Future<Output = T> + Send,
) -> T {
    use diesel_async::scoped_futures::ScopedFutureExt;
    use diesel_async::{AsyncConnection, RunQueryDsl};
    let mut holder = app.db.conn().await.expect("conn");
    holder
        .transaction::<_, diesel::result::Error, _>(|c| {
            async move {
                diesel::sql_query(lock).execute(c).await?;
                Ok(during.await)
            }
            .scope_boxed()
        })
        .await
        .expect("held")
}

#[tokio::test]
async fn two_reset_links_of_one_account_completed_at_once_set_one_password() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    for _ in 0..2 {
        assert_eq!(ask(&app, &ws.admin_email).await.status(), 202);
    }
    let paths = [
        format!("/password-reset/{}", sink.token_for(&ws.admin_email, "password-reset", 0).await),
        format!("/password-reset/{}", sink.token_for(&ws.admin_email, "password-reset", 1).await),
    ];
    let sends = [
        form_token(&app, &paths[0]).await.post(&app, &paths[0], &[("password", "the first new password")]),
        form_token(&app, &paths[1]).await.post(&app, &paths[1], &[("password", "the second new password")]),
    ];
    // Both completions start while the account is held, so both reach their locks before either
    // can finish: each with its own link, the two would wait for each other.
    let handles = with_account_held(&app, &ws.admin_email, async {
        let handles = sends.map(|send| tokio::spawn(send.send()));
        until_waiting(&app, 2).await;
        handles
    })
    .await;
    // Completing one voids the other: never both, never a 500.
    assert_eq!(sorted_statuses(handles).await, [303, 410]);
    let works = [
        login_status(&app, &ws.admin_email, "the first new password").await,
        login_status(&app, &ws.admin_email, "the second new password").await,
    ];
    assert_eq!(works.iter().filter(|s| **s == 200).count(), 1, "{works:?}");
}

/// A sign-in (the login API's or the sign-in page's) whose password check ran just before a new
/// password was set, and whose token or session would be stored just after it, stores nothing:
/// the old password opens nothing once the new one is in, and the reset's "signed out
/// everywhere" holds.
#[tokio::test]
async fn a_sign_in_racing_a_new_password_leaves_nothing_signed_in() {
    use diesel_async::scoped_futures::ScopedFutureExt;
    use diesel_async::{AsyncConnection, RunQueryDsl};
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let form = form_token(&app, "/login").await;
    let api = app
        .client
        .post(app.url("/v1/auth/login"))
        .json(&json!({"email": ws.admin_email, "password": ws.admin_password}));
    let page = form.post(&app, "/login", &[("email", &ws.admin_email), ("password", &ws.admin_password), ("next", "")]);
    // The new password is written and uncommitted, as a reset's transaction holds it: both
    // sign-ins verify the old one (still the committed one) and reach the store before it commits.
    let mut holder = app.db.conn().await.expect("conn");
    let (api, page) = holder
        .transaction::<_, diesel::result::Error, _>(|c| {
            let (app, email) = (&app, ws.admin_email.clone());
            async move {
                diesel::sql_query(
                    "UPDATE users SET password_hash = '$argon2id$v=19$m=19456,t=2,p=1$new' WHERE email = $1",
                )
                .bind::<diesel::sql_types::Text, _>(email)
                .execute(c)
                .await?;
                let handles = (tokio::spawn(api.send()), tokio::spawn(page.send()));
                until_waiting(app, 2).await;
                Ok(handles)
            }
            .scope_boxed()
        })
        .await
        .expect("the new password");
    assert_eq!(api.await.expect("task").expect("request").status(), 401, "the login API issues no token");
    assert_eq!(page.await.expect("task").expect("request").status(), 401, "the page opens no session");
    let stored = format!(
        "SELECT (SELECT count(*) FROM user_tokens t JOIN users u ON u.id = t.user_id WHERE u.email = '{0}') \
         + (SELECT count(*) FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = '{0}') = 0",
        ws.admin_email
    );
    assert!(sql_bool(&app, &stored).await, "neither a token nor a session was stored");
}
