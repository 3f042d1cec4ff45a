//! Sign-ins in the audit log: the record is written in the transaction of the login token or
//! session it describes (so neither exists without the other), a member of several workspaces
//! who signs in on the page before choosing one is recorded in each of them, and an accepted
//! invitation is a sign-in too.

use reqwest::header::{COOKIE, SET_COOKIE};
use serde_json::{json, Value};

use super::{advanced, check, records, UA};
use crate::credentials::{login_raw, sql, sql_bool};
use crate::helpers::TestApp;
use crate::pages::{csrf_of, submit_login, Browser};

/// The `name=value` of a `Set-Cookie` the response carries.
fn cookie(res: &reqwest::Response, name: &str) -> Option<String> {
    res.headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{name}=")))
        .and_then(|v| v.split(';').next())
        .map(str::to_owned)
}

/// `user.signed_in` records of `user` in the log `token` reads.
async fn sign_ins_of(app: &TestApp, token: &str, user: i64) -> usize {
    records(app, token, "user.signed_in").await.iter().filter(|r| r["actor"]["id"] == user).count()
}

/// Makes every insert into `table` (matching `when`) fail, as a full disk or a lost connection
/// would in the middle of the change's transaction.
pub(super) async fn break_inserts(app: &TestApp, table: &str, when: &str) {
    sql(app, "CREATE OR REPLACE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$").await;
    sql(app, &format!("CREATE TRIGGER test_refuse BEFORE INSERT ON {table} FOR EACH ROW WHEN ({when}) EXECUTE FUNCTION test_refuse()")).await;
}

#[tokio::test]
async fn a_sign_in_and_its_record_are_stored_together_or_not_at_all() {
    let app = TestApp::spawn().await;
    let (ws, token) = advanced(&app).await;
    let body = json!({"email": ws.admin_email, "password": ws.admin_password});

    // A normal sign-in: exactly one record, with who and where.
    let res = app
        .client
        .post(app.url("/v1/auth/login"))
        .header("user-agent", UA)
        .header("x-request-id", "rid-one-sign-in")
        .json(&body)
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    let all = records(&app, &token, "user.signed_in").await;
    let mine: Vec<&Value> = all.iter().filter(|r| r["request_id"] == "rid-one-sign-in").collect();
    assert_eq!(mine.len(), 1, "exactly one record of the sign-in: {all:?}");
    check(mine[0], ("user", Some(ws.admin_id)), ("user", ws.admin_id), "rid-one-sign-in");
    let before = sign_ins_of(&app, &token, ws.admin_id).await;
    let tokens = |n: usize| format!("(SELECT count(*) FROM user_tokens WHERE user_id = {}) = {n}", ws.admin_id);
    let sessions = |n: usize| format!("(SELECT count(*) FROM sessions WHERE user_id = {}) = {n}", ws.admin_id);
    assert!(sql_bool(&app, &tokens(2)).await && sql_bool(&app, &sessions(0)).await);

    // The record cannot be written: no token and no session either.
    break_inserts(&app, "audit_events", "NEW.action = 'user.signed_in'").await;
    let res = login_raw(&app, &body).await;
    assert!(res.status().is_server_error(), "{}", res.status());
    assert!(sql_bool(&app, &tokens(2)).await, "no token without its record");
    let page = submit_login(&app, &ws.admin_email, &ws.admin_password).await;
    assert!(page.status().is_server_error(), "{}", page.status());
    assert!(cookie(&page, "wms_session").is_none());
    assert!(sql_bool(&app, &sessions(0)).await, "no session without its record");
    sql(&app, "DROP TRIGGER test_refuse ON audit_events").await;

    // The token or the session cannot be stored: no record.
    break_inserts(&app, "user_tokens", "true").await;
    break_inserts(&app, "sessions", "true").await;
    assert!(login_raw(&app, &body).await.status().is_server_error());
    assert!(submit_login(&app, &ws.admin_email, &ws.admin_password).await.status().is_server_error());
    assert_eq!(sign_ins_of(&app, &token, ws.admin_id).await, before, "no record of a sign-in that did not happen");
}

#[tokio::test]
async fn a_member_of_several_workspaces_signing_in_on_the_page_is_recorded_in_each_and_choosing_adds_none() {
    let app = TestApp::spawn().await;
    let (ws, token) = advanced(&app).await;
    let (other, other_token) = advanced(&app).await;
    sql(
        &app,
        &format!(
            "INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ({}, {}, 'agent')",
            other.id, ws.admin_id
        ),
    )
    .await;
    let mine = sign_ins_of(&app, &token, ws.admin_id).await; // `admin_token`'s sign-in
    assert_eq!(sign_ins_of(&app, &other_token, ws.admin_id).await, 0);

    let res = submit_login(&app, &ws.admin_email, &ws.admin_password).await;
    assert_eq!(res.headers()["location"], "/login/workspace", "asked to choose");
    assert_eq!(sign_ins_of(&app, &token, ws.admin_id).await, mine + 1);
    assert_eq!(sign_ins_of(&app, &other_token, ws.admin_id).await, 1, "in each workspace of the account");
    let r = records(&app, &other_token, "user.signed_in").await;
    let r = r.iter().find(|r| r["actor"]["id"] == ws.admin_id).expect("record");
    assert_eq!((r["target"]["type"].as_str(), r["target"]["id"].as_i64()), (Some("user"), Some(ws.admin_id)));
    assert_eq!(r["actor"]["label"], ws.admin_email.as_str());
    assert_eq!(r["ip"], "127.0.0.1");

    // Choosing the workspace is not another sign-in.
    let session = cookie(&res, "wms_session").expect("session cookie");
    let picker = app.client.get(app.url("/login/workspace")).header(COOKIE, &session).send().await.expect("page");
    let b = Browser { cookie: session, csrf: csrf_of(&picker.text().await.expect("html")) };
    let chosen = b.post(&app, "/login/workspace", &[("workspace_id", &other.id.to_string())], true).await;
    assert_eq!(chosen.status(), 303);
    assert_eq!(sign_ins_of(&app, &token, ws.admin_id).await, mine + 1);
    assert_eq!(sign_ins_of(&app, &other_token, ws.admin_id).await, 1);
}

#[tokio::test]
async fn an_accepted_invitation_is_recorded_as_a_sign_in_without_the_link() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let (_, token) = advanced(&app).await;
    let add = json!({"email": "ivy@test.wms", "name": "Ivy", "role": "agent"});
    let res = app.post_json("/v1/users", &token, &add).await;
    assert_eq!(res.status(), 201);
    let added: Value = res.json().await.expect("json");
    let user = added["id"].as_i64().expect("id");
    let link = sink.token_for("ivy@test.wms", "invitations", 0).await;
    assert_eq!(sign_ins_of(&app, &token, user).await, 0);

    let path = format!("/invitations/{link}");
    let res = crate::pages::form_token(&app, &path)
        .await
        .post(&app, &path, &[("password", "a long new password")])
        .header("user-agent", UA)
        .header("x-request-id", "rid-invited")
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 303);
    let all = records(&app, &token, "user.signed_in").await;
    let r = all.iter().find(|r| r["actor"]["id"] == user).expect("the sign-in");
    check(r, ("user", Some(user)), ("user", user), "rid-invited");
    assert_eq!(r["actor"]["label"], "ivy@test.wms");
    assert_eq!(r["details"]["via"], "invitation");
    assert_eq!(sign_ins_of(&app, &token, user).await, 1);
    let text = Value::from(all).to_string();
    assert!(!text.contains(&link) && !text.contains("a long new password"), "no link or password in {text}");
}
