//! Accounts only their owners control: each of the five ways in which an admin of one
//! workspace (or a key) could take over an account now fails at the step shown and changes
//! nothing, and `POST /v1/users` answers alike whatever the account's state.

use std::time::Duration;

use domain::workspace::PlanTier;
use serde_json::{json, Value};

use crate::credentials::{admin_token, sql, sql_bool};
use crate::helpers::{problem, TestApp};
use crate::pages::{form_token, sign_in, submit_form};

async fn login(app: &TestApp, email: &str, password: &str, ws: Option<i64>) -> reqwest::Response {
    let body = json!({"email": email, "password": password, "workspace_id": ws});
    app.client.post(app.url("/v1/auth/login")).json(&body).send().await.expect("request")
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    k.sort();
    k
}

#[tokio::test]
async fn another_workspaces_admin_adding_an_invited_person_gets_no_link_and_no_password_is_set() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let a = app.create_workspace(PlanTier::Advanced).await;
    let b = app.create_workspace(PlanTier::Free).await;
    let a_admin = admin_token(&app, &a).await;
    let res = app.post_json("/v1/users", &a_admin, &json!({"email": "newhire@victim.test", "role": "admin"})).await;
    assert_eq!(res.status(), 201);
    // B's admin adds the same address on B's members page: no link is shown to them.
    let eve = sign_in(&app, &b).await;
    let page = eve
        .post(&app, "/settings/workspace/members", &[("email", "newhire@victim.test"), ("role", "agent")], true)
        .await;
    assert_eq!(page.status(), 201);
    let html = page.text().await.expect("html");
    assert!(!html.contains("wmsu_") && !html.contains("/invitations/"), "no link on the page");
    assert!(html.contains("We sent an invitation to newhire@victim.test"));
    // Both links went to the address; nobody has set a password, nobody signs in.
    let mails = sink.wait_for(2, Duration::from_secs(15)).await;
    assert!(mails.iter().all(|m| m.to == ["newhire@victim.test"]), "{mails:?}");
    assert!(sql_bool(&app, "(SELECT password_hash FROM users WHERE email = 'newhire@victim.test') = '!invited'").await);
    problem(login(&app, "newhire@victim.test", "anything at all", Some(a.id)).await, 401, "invalid_credentials").await;

    // The real person opens A's link (the mail naming A's workspace): A only becomes active.
    let a_name = format!("Workspace {}", a.admin_email.trim_start_matches("admin-").split('@').next().unwrap_or(""));
    let token_of = |m: &crate::mail_sink::ReceivedMail| {
        m.link("/invitations/").and_then(|l| l.rsplit('/').next().map(str::to_owned)).expect("token")
    };
    let a_link = token_of(mails.iter().find(|m| m.subject.contains(&a_name)).expect("A's mail"));
    let links: Vec<String> = mails.iter().map(token_of).collect();
    let done =
        submit_form(&app, &format!("/invitations/{a_link}"), &[("password", "the real person's password")]).await;
    assert_eq!(done.status(), 303);
    assert_eq!(login(&app, "newhire@victim.test", "the real person's password", Some(a.id)).await.status(), 200);
    // B's membership is still invited: naming B at sign-in is a wrong password.
    problem(
        login(&app, "newhire@victim.test", "the real person's password", Some(b.id)).await,
        401,
        "invalid_credentials",
    )
    .await;
    // B's link can no longer set the password (the account has one): it asks to sign in.
    let b_link = links.iter().find(|l| **l != a_link).expect("B's link");
    let page = app.get(&format!("/invitations/{b_link}")).await.text().await.expect("html");
    assert!(page.contains("Sign in with it to accept"), "{page}");
    let try_set =
        submit_form(&app, &format!("/invitations/{b_link}"), &[("password", "attacker's new password")]).await;
    assert_eq!(try_set.status(), 401);
    problem(login(&app, "newhire@victim.test", "attacker's new password", None).await, 401, "invalid_credentials")
        .await;
}

#[tokio::test]
async fn pre_registering_an_address_gives_nobody_access_to_a_later_workspace() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let eve = app.create_workspace(PlanTier::Advanced).await;
    let bigcorp = app.create_workspace(PlanTier::Advanced).await;
    let eve_admin = admin_token(&app, &eve).await;
    let big_admin = admin_token(&app, &bigcorp).await;
    let first = app.post_json("/v1/users", &eve_admin, &json!({"email": "ceo@bigcorp.test", "role": "agent"})).await;
    assert_eq!(first.status(), 201);
    let first: Value = first.json().await.expect("json");
    assert!(!first.to_string().contains("wmsu_"));
    // BigCorp adds the address: the same answer as for anyone, an e-mail to the address.
    let later = app.post_json("/v1/users", &big_admin, &json!({"email": "ceo@bigcorp.test", "role": "admin"})).await;
    assert_eq!(later.status(), 201);
    let later: Value = later.json().await.expect("json");
    assert_eq!(keys(&first), keys(&later));
    assert_eq!(later["status"], "invited");
    sink.wait_for(2, Duration::from_secs(15)).await;
    assert_eq!(sink.to("ceo@bigcorp.test").len(), 2);
    problem(login(&app, "ceo@bigcorp.test", "whatever eve chose", Some(bigcorp.id)).await, 401, "invalid_credentials")
        .await;
}

#[tokio::test]
async fn post_users_answers_alike_for_a_new_a_passwordless_and_a_passworded_account() {
    let (app, _sink) = TestApp::spawn_mailing(|_| {}).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let other = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let other_admin = admin_token(&app, &other).await;
    // A password-less account (invited elsewhere) and an account with a password.
    let res = app.post_json("/v1/users", &other_admin, &json!({"email": "pending@x.test", "role": "agent"})).await;
    assert_eq!(res.status(), 201);
    let mut answers = Vec::new();
    for email in ["brand-new@x.test", "pending@x.test", other.admin_email.as_str()] {
        let res = app.post_json("/v1/users", &admin, &json!({"email": email, "role": "agent"})).await;
        let status = res.status().as_u16();
        let body: Value = res.json().await.expect("json");
        answers.push((status, keys(&body), body["status"].clone(), body["active"].clone()));
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "{answers:?}");
    assert_eq!(answers[0].0, 201);
    assert_eq!(answers[0].2, "invited");
    // The account with a password: invited here, so its owner's sign-ins are not recorded here and
    // this workspace is not offered.
    let res = login(&app, &other.admin_email, &other.admin_password, Some(ws.id)).await;
    problem(res, 401, "invalid_credentials").await;
    assert!(
        !sql_bool(
            &app,
            &format!(
                "EXISTS (SELECT 1 FROM audit_events WHERE workspace_id = {} AND action LIKE 'user.sign_in%')",
                ws.id
            )
        )
        .await
    );
    let res = login(&app, &other.admin_email, &other.admin_password, None).await;
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["workspace_id"], other.id);
}

#[tokio::test]
async fn a_key_with_users_write_cannot_add_an_admin_and_nothing_changes() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let key = app.api_key_with_scopes(&ws, &["users:write"]).await;
    let res = app.post_json("/v1/users", &key, &json!({"email": "boss@x.test", "role": "admin"})).await;
    problem(res, 403, "forbidden").await;
    assert!(!sql_bool(&app, "EXISTS (SELECT 1 FROM users WHERE email = 'boss@x.test')").await);
    assert!(!sql_bool(&app, "EXISTS (SELECT 1 FROM mail_outbox)").await);
    assert!(!sql_bool(&app, "EXISTS (SELECT 1 FROM audit_events WHERE action = 'member.added')").await);
    // An agent is fine for the key.
    let res = app.post_json("/v1/users", &key, &json!({"email": "helper@x.test", "role": "agent"})).await;
    assert_eq!(res.status(), 201);
}

/// An address without a password is proven by the link alone, whoever is signed in in the
/// browser that opens it (the admin who sent it, say): the page offers the password form, and
/// choosing one joins and signs the browser in as the invited account.
#[tokio::test]
async fn an_address_without_a_password_accepts_in_a_browser_signed_in_as_someone_else() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let res = app.post_json("/v1/users", &admin, &json!({"email": "newcomer@x.test", "role": "agent"})).await;
    assert_eq!(res.status(), 201);
    let token = sink.token_for("newcomer@x.test", "invitations", 0).await;
    let path = format!("/invitations/{token}");
    let sender = sign_in(&app, &ws).await;
    let shown = sender.get(&app, &path).await;
    assert_eq!(shown.status(), 200);
    assert!(shown.text().await.expect("html").contains("name=\"password\""), "the password form");
    let form = form_token(&app, &path).await;
    let password = "newcomer password 2026";
    let accepted = app
        .client
        .post(app.url(&path))
        .header("cookie", format!("{}; {}", sender.cookie, form.cookie))
        .form(&[("csrf_token", form.csrf.as_str()), ("password", password)])
        .send()
        .await
        .expect("request");
    assert_eq!(accepted.status(), 303);
    let (session, _) = crate::pages::set_cookie(&accepted, "wms_session").expect("a new session");
    assert_ne!(session, sender.cookie, "the browser is signed in as the invited account");
    assert_eq!(login(&app, "newcomer@x.test", password, Some(ws.id)).await.status(), 200);
}

#[tokio::test]
async fn an_invited_account_with_a_password_must_sign_in_to_accept_and_another_account_is_refused() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let other = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let res = app.post_json("/v1/users", &admin, &json!({"email": other.admin_email, "role": "agent"})).await;
    assert_eq!(res.status(), 201);
    let token = sink.token_for(&other.admin_email, "invitations", 0).await;
    // Someone else signed in in this browser: refused, nothing changes (the form's token is the
    // one a signed-out visit of the page handed out, so only the other account is refused).
    let path = format!("/invitations/{token}");
    let form = form_token(&app, &path).await;
    let stranger = sign_in(&app, &ws).await;
    let shown = stranger.get(&app, &path).await;
    assert_eq!(shown.status(), 403);
    // Its sign-out button works: it carries the session's token.
    assert!(shown.text().await.expect("html").contains(&format!("value=\"{}\"", stranger.csrf)));
    let refused = app
        .client
        .post(app.url(&path))
        .header("cookie", format!("{}; {}", stranger.cookie, form.cookie))
        .form(&[("csrf_token", form.csrf.as_str()), ("password", other.admin_password.as_str())])
        .send()
        .await
        .expect("request");
    assert_eq!(refused.status(), 403);
    assert!(refused.text().await.expect("html").contains("This invitation is for another account"));
    // The link alone never signs in: a wrong password is refused, the right one accepts.
    let wrong = form.post(&app, &path, &[("password", "not the password")]).send().await.expect("request");
    assert_eq!(wrong.status(), 401);
    assert!(
        sql_bool(
            &app,
            &format!(
                "(SELECT status FROM workspace_members WHERE workspace_id = {} AND user_id = {}) = 'invited'",
                ws.id, other.admin_id
            )
        )
        .await
    );
    let ok = form.post(&app, &path, &[("password", other.admin_password.as_str())]).send().await.expect("request");
    assert_eq!(ok.status(), 303);
    assert_eq!(login(&app, &other.admin_email, &other.admin_password, Some(ws.id)).await.status(), 200);
    // The used link is gone (410) to a post too, even one without the form's token, which the
    // accepting browser no longer has.
    let again = app.client.post(app.url(&path)).form(&[("password", other.admin_password.as_str())]).send().await;
    assert_eq!(again.expect("request").status(), 410);
    // The password is the account's own still.
    assert_eq!(login(&app, &other.admin_email, &other.admin_password, Some(other.id)).await.status(), 200);
}

/// The invitation page checks the account's password, so it counts against the sign-in throttle
/// (5 wrong passwords per address and client network): without it, anyone holding the link could
/// guess the password there at the hashing rate, past the sign-in form's limit.
#[tokio::test]
async fn wrong_passwords_on_an_invitation_page_are_throttled_with_the_sign_in_form() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let other = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let res = app.post_json("/v1/users", &admin, &json!({"email": other.admin_email, "role": "agent"})).await;
    assert_eq!(res.status(), 201);
    let token = sink.token_for(&other.admin_email, "invitations", 0).await;
    let path = format!("/invitations/{token}");
    let form = form_token(&app, &path).await;
    let attempt = |password: &'static str| form.post(&app, &path, &[("password", password)]).send();
    // Two wrong sign-ins on the form and three on the page use up the address's five.
    for _ in 0..2 {
        assert_eq!(login(&app, &other.admin_email, "not the password", None).await.status(), 401);
    }
    for _ in 0..3 {
        assert_eq!(attempt("not the password").await.expect("request").status(), 401);
    }
    let throttled = attempt("still not it").await.expect("request");
    assert_eq!(throttled.status(), 429);
    let retry: u64 = throttled
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("Retry-After");
    assert!(retry > 0 && retry <= 15 * 60, "{retry}");
    assert!(throttled.text().await.expect("body").contains("Too many failed sign-ins"));
    // Even the right password waits now, on the page and on the form: the budget is one.
    let right = form.post(&app, &path, &[("password", other.admin_password.as_str())]).send().await.expect("request");
    assert_eq!(right.status(), 429);
    problem(login(&app, &other.admin_email, &other.admin_password, None).await, 429, "rate_limited").await;
    assert!(
        sql_bool(
            &app,
            &format!(
                "(SELECT status FROM workspace_members WHERE workspace_id = {} AND user_id = {}) = 'invited'",
                ws.id, other.admin_id
            )
        )
        .await
    );
}

#[tokio::test]
async fn an_old_scheme_pending_invitation_is_voided_by_the_upgrade_and_can_be_sent_again() {
    // Rows as the previous release left them: an account without a password, its membership
    // active, and an open link that was shown to the inviter.
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    // The migration's rule, applied to rows the test writes as the old code did.
    sql(&app, &format!(
        "WITH u AS (INSERT INTO users (email, name, password_hash) VALUES ('old@x.test', 'Old', '!invited') RETURNING id)
         INSERT INTO workspace_members (workspace_id, user_id, role, status, joined_at) SELECT {}, id, 'agent', 'invited', NULL FROM u", ws.id)).await;
    let (_, list) = app.get_json("/v1/users", &admin).await;
    let old =
        list["data"].as_array().and_then(|d| d.iter().find(|m| m["email"] == "old@x.test").cloned()).expect("listed");
    assert_eq!((old["status"].as_str(), old["active"].as_bool()), (Some("invited"), Some(false)));
    let res = app.post_json("/v1/users", &admin, &json!({"email": "old@x.test", "role": "agent"})).await;
    assert_eq!(res.status(), 201);
    let token = sink.token_for("old@x.test", "invitations", 0).await;
    assert_eq!(app.get(&format!("/invitations/{token}")).await.status(), 200);
}
