//! Members: roles (nobody changes their own, the last admin stays), names per workspace, one-time
//! invitations, and the members page.

use super::*;

#[tokio::test]
async fn nobody_changes_their_own_role_and_the_last_admin_stays() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let own = format!("/v1/users/{}", ws.admin_id);
    let demote = app.authed(Method::PATCH, &own, &admin).json(&json!({"role": "agent"}));
    problem(demote.send().await.expect("request"), 403, "forbidden").await;
    let rename = app.authed(Method::PATCH, &own, &admin).json(&json!({"name": "Ann Admin"}));
    let res = rename.send().await.expect("request");
    assert_eq!(res.status(), 200);
    // A key never touches an admin (decided before the last-admin rule is even asked).
    let key = app.api_key_with_scopes(&ws, &["users:write"]).await;
    let demote = app.authed(Method::PATCH, &own, &key).json(&json!({"role": "agent"}));
    problem(demote.send().await.expect("request"), 403, "forbidden").await;
    problem(app.authed(Method::DELETE, &own, &key).send().await.expect("request"), 403, "forbidden").await;
}

#[tokio::test]
async fn a_members_name_is_kept_per_workspace() {
    let app = TestApp::spawn().await;
    let a = app.create_workspace(PlanTier::Advanced).await;
    let b = app.create_workspace(PlanTier::Advanced).await;
    let key_a = app.api_key(&a).await;
    let key_b = app.api_key(&b).await;
    let (email, _) = add_member(&app, a.id, "agent").await;
    let id = user_id(&app, &email).await;
    crate::credentials::sql(
        &app,
        &format!("INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ({}, {id}, 'agent')", b.id),
    )
    .await;
    let res = app.authed(Method::PATCH, &format!("/v1/users/{id}"), &key_a).json(&json!({"name": "Ann in A"}));
    assert_eq!(res.send().await.expect("request").status(), 200);
    let (_, in_a) = app.get_json(&format!("/v1/users/{id}"), &key_a).await;
    let (_, in_b) = app.get_json(&format!("/v1/users/{id}"), &key_b).await;
    assert_eq!(in_a["name"], "Ann in A");
    assert_eq!(in_b["name"], "Member");
}

#[tokio::test]
async fn members_are_invited_by_email_accept_once_and_are_refused_twice() {
    let (app, sink) = TestApp::spawn_mailing(|s| s.http.public_url = Some("https://wms.example.com".into())).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let res = app
        .post_json(
            "/v1/users",
            &admin,
            &json!({"email": "New.Person@Example.com", "name": "New Person", "role": "agent"}),
        )
        .await;
    assert_eq!(res.status(), 201);
    let added: Value = res.json().await.expect("json");
    assert_eq!(
        (added["email"].as_str(), added["role"].as_str(), added["status"].as_str(), added["active"].as_bool()),
        (Some("new.person@example.com"), Some("agent"), Some("invited"), Some(false))
    );
    assert!(added.get("invitation").is_none(), "no link in the answer: {added}");
    assert!(!added.to_string().contains("wmsu_"), "{added}");
    let mail = sink.wait_for_mail_to("new.person@example.com", std::time::Duration::from_secs(15)).await;
    let url = mail.link("/invitations/").expect("link");
    assert!(url.starts_with("https://wms.example.com/invitations/wmsu_"), "{url}");
    assert!(mail.html.as_deref().is_some_and(|h| h.contains(&url)));
    let token = url.rsplit('/').next().expect("token").to_owned();
    assert!(
        !sql_bool(
            &app,
            &format!("EXISTS (SELECT 1 FROM member_invitations WHERE token_digest::text LIKE '%{token}%')")
        )
        .await
    );
    // Invited: no sign-in yet (no password), not even offered.
    let (_, list) = app.get_json("/v1/users", &admin).await;
    assert_eq!(list["data"].as_array().map(Vec::len), Some(2));
    for (body, field) in [
        (json!({"email": "not-an-email", "role": "agent"}), "email"),
        (json!({"email": "x@y.io", "role": "owner"}), "role"),
        (json!({"email": "x@y.io", "role": "agent", "name": ""}), "name"),
    ] {
        let res = app.post_json("/v1/users", &admin, &body).await;
        let status = res.status().as_u16();
        let b: Value = res.json().await.expect("json");
        assert!(status == 422 || status == 400, "{body}: {status}");
        assert!(b.to_string().contains(field), "{body}: {b}");
    }
    assert!(sql_bool(&app, "(SELECT count(*) FROM users WHERE email IN ('not-an-email', 'x@y.io')) = 0").await);

    // The link: a page to choose a password, then signed in; it works once.
    let path = format!("/invitations/{token}");
    let page = app.get(&path).await;
    assert_eq!(page.status(), 200);
    assert!(page.text().await.expect("html").contains("Choose a password"));
    let form = crate::pages::form_token(&app, &path).await;
    let short = form.post(&app, &path, &[("password", "short")]).send().await.expect("request");
    assert_eq!(short.status(), 422);
    let done = form.post(&app, &path, &[("password", "a long new password")]).send().await.expect("request");
    assert_eq!(done.status(), 303);
    assert!(done.headers().get_all("set-cookie").iter().any(|c| c.to_str().unwrap_or("").starts_with("wms_session=")));
    let used = app.get(&format!("/invitations/{token}")).await;
    assert_eq!(used.status(), 410);
    let again = form.post(&app, &path, &[("password", "another long password")]).send().await.expect("request");
    assert_eq!(again.status(), 410);
    token_for(&app, "new.person@example.com", "a long new password", Some(ws.id)).await;
    assert_eq!(app.get("/invitations/wmsu_madeup").await.status(), 410);
    // Active now: adding them again is a conflict.
    let twice = app.post_json("/v1/users", &admin, &json!({"email": "new.person@example.com", "role": "agent"})).await;
    problem(twice, 409, "conflict").await;
}

/// The invitation's form is a pre-session form: another site's form cannot accept an invitation
/// with a password of its choosing through a link it learnt.
#[tokio::test]
async fn an_invitation_post_without_its_form_token_is_refused_and_the_invitation_stays_unused() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let res = app.post_json("/v1/users", &admin, &json!({"email": "csrf@example.com", "role": "agent"})).await;
    assert_eq!(res.status(), 201);
    let token = sink.token_for("csrf@example.com", "invitations", 0).await;
    let path = format!("/invitations/{token}");
    let form = crate::pages::form_token(&app, &path).await;
    let chosen = ("password", "a password from elsewhere");
    let forged = [
        app.client.post(app.url(&path)).form(&[chosen]),
        app.client.post(app.url(&path)).header("cookie", &form.cookie).form(&[chosen]),
        app.client.post(app.url(&path)).header("cookie", &form.cookie).form(&[("csrf_token", "AAAA"), chosen]),
        app.client.post(app.url(&path)).form(&[("csrf_token", form.csrf.as_str()), chosen]),
    ];
    for post in forged {
        let res = post.send().await.expect("request");
        assert_eq!(res.status(), 403);
        assert!(res.headers()["content-type"].to_str().unwrap_or("").starts_with("text/html"));
        assert!(!res
            .headers()
            .get_all("set-cookie")
            .iter()
            .any(|c| c.to_str().unwrap_or("").starts_with("wms_session=")));
    }
    let unused = format!(
        "(SELECT status FROM workspace_members m JOIN users u ON u.id = m.user_id \
          WHERE m.workspace_id = {} AND u.email = 'csrf@example.com') = 'invited' \
         AND (SELECT password_hash FROM users WHERE email = 'csrf@example.com') = '!invited'",
        ws.id
    );
    assert!(sql_bool(&app, &unused).await, "the invitation is unused and no password was set");
    assert_eq!(app.get(&path).await.status(), 200);
    // The form itself accepts.
    let done = form.post(&app, &path, &[("password", "the invitee's own password")]).send().await.expect("request");
    assert_eq!(done.status(), 303);
    assert!(!sql_bool(&app, &unused).await);
}

#[tokio::test]
async fn an_expired_invitation_is_refused_with_a_clear_page() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let res = app.post_json("/v1/users", &admin, &json!({"email": "late@example.com", "role": "agent"})).await;
    assert_eq!(res.status(), 201);
    let token = sink.token_for("late@example.com", "invitations", 0).await;
    crate::credentials::sql(&app, "UPDATE member_invitations SET expires_at = now() - interval '1 second'").await;
    let page = app.get(&format!("/invitations/{token}")).await;
    assert_eq!(page.status(), 410);
    assert!(page.text().await.expect("html").contains("has expired"));
}

/// A link whose membership was removed answers 410 and changes nothing: no password is set.
#[tokio::test]
async fn the_link_of_a_removed_membership_answers_410_and_sets_no_password() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let res = app.post_json("/v1/users", &admin, &json!({"email": "gone@example.com", "role": "agent"})).await;
    assert_eq!(res.status(), 201);
    let id = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    let token = sink.token_for("gone@example.com", "invitations", 0).await;
    let path = format!("/invitations/{token}");
    // The page was opened while the membership still existed.
    let form = crate::pages::form_token(&app, &path).await;
    let removed = app.authed(Method::DELETE, &format!("/v1/users/{id}"), &admin).send().await.expect("request");
    assert_eq!(removed.status(), 204);
    assert_eq!(app.get(&path).await.status(), 410);
    let accept = form.post(&app, &path, &[("password", "a password after all")]).send().await.expect("request");
    assert_eq!(accept.status(), 410);
    assert!(sql_bool(&app, "(SELECT password_hash FROM users WHERE email = 'gone@example.com') = '!invited'").await);
    assert!(!sql_bool(&app, &format!("EXISTS (SELECT 1 FROM workspace_members WHERE user_id = {id})")).await);
}

/// Links expire: 7 days for an invitation, 1 hour for a password reset.
#[tokio::test]
async fn invitation_links_last_seven_days_and_reset_links_one_hour() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let res = app.post_json("/v1/users", &admin, &json!({"email": "week@example.com", "role": "agent"})).await;
    assert_eq!(res.status(), 201);
    let reset = app.client.post(app.url("/v1/auth/password-reset")).json(&json!({"email": ws.admin_email}));
    assert_eq!(reset.send().await.expect("request").status(), 202);
    let lasts = |table: &str, ttl: &str| {
        format!(
            "(SELECT bool_and(expires_at - created_at BETWEEN interval '{ttl}' - interval '1 minute' \
              AND interval '{ttl}' + interval '1 minute') AND count(*) = 1 FROM {table})"
        )
    };
    assert!(sql_bool(&app, &lasts("member_invitations", "7 days")).await, "an invitation lasts 7 days");
    assert!(sql_bool(&app, &lasts("password_resets", "1 hour")).await, "a reset link lasts 1 hour");
}

/// Links are built on `http.public_url`, or without it on the address the server listens on;
/// never on the request's `Host`, `X-Forwarded-Host` or `Forwarded`, which whoever sends the
/// request chooses.
#[tokio::test]
async fn without_a_public_url_links_use_the_bind_address_whatever_the_request_headers_claim() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    assert!(app.settings.http.public_url.is_none());
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let forged = |req: reqwest::RequestBuilder| {
        req.header("x-forwarded-host", "evil.example")
            .header("forwarded", "host=evil.example;proto=https")
            .header("host", "evil.example")
    };
    let invite = forged(app.authed(Method::POST, "/v1/users", &admin))
        .json(&json!({"email": "linked@example.com", "role": "agent"}));
    assert_eq!(invite.send().await.expect("request").status(), 201);
    let reset = forged(app.client.post(app.url("/v1/auth/password-reset"))).json(&json!({"email": ws.admin_email}));
    assert_eq!(reset.send().await.expect("request").status(), 202);
    let wait = std::time::Duration::from_secs(15);
    for (to, kind) in [("linked@example.com", "/invitations/"), (ws.admin_email.as_str(), "/password-reset/")] {
        let link = sink.wait_for_mail_to(to, wait).await.link(kind).expect("a link");
        assert!(link.starts_with(&format!("{}{kind}wmsu_", app.address)), "{link}");
    }
}

#[tokio::test]
async fn the_members_page_invites_by_email_resends_and_changes_roles() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let ws = app.create_workspace(PlanTier::Growth).await;
    let b = sign_in(&app, &ws).await;
    let page = b.get(&app, "/settings/workspace/members").await;
    assert_eq!(page.status(), 200);
    let html = page.text().await.expect("html");
    assert!(html.contains(&ws.admin_email) && html.contains("Send invitation"));
    let added =
        b.post(&app, "/settings/workspace/members", &[("email", "pat@example.com"), ("role", "agent")], true).await;
    assert_eq!(added.status(), 201);
    let html = added.text().await.expect("html");
    assert!(html.contains("We sent an invitation to pat@example.com"), "{html}");
    assert!(!html.contains("/invitations/wmsu_"), "the link goes to the address only");
    assert!(html.contains("invited") && html.contains("Resend invitation"));
    let first = sink.token_for("pat@example.com", "invitations", 0).await;
    // Resending: a new link, the old one stops working.
    let again =
        b.post(&app, "/settings/workspace/members", &[("email", "pat@example.com"), ("role", "agent")], true).await;
    assert_eq!(again.status(), 201);
    let second = sink.token_for("pat@example.com", "invitations", 1).await;
    assert_ne!(first, second);
    assert_eq!(app.get(&format!("/invitations/{first}")).await.status(), 410);
    assert_eq!(app.get(&format!("/invitations/{second}")).await.status(), 200);
    let pat = user_id(&app, "pat@example.com").await;
    let promoted = b.post(&app, &format!("/settings/workspace/members/{pat}"), &[("role", "admin")], true).await;
    assert_eq!(promoted.status(), 303);
    assert!(sql_bool(&app, &format!("(SELECT role FROM workspace_members WHERE user_id = {pat}) = 'admin'")).await);
    let own = b.post(&app, &format!("/settings/workspace/members/{}", ws.admin_id), &[("active", "false")], true).await;
    assert_eq!(own.status(), 403);
    assert!(
        sql_bool(&app, &format!("(SELECT is_active FROM workspace_members WHERE user_id = {})", ws.admin_id)).await
    );
}

#[tokio::test]
async fn another_workspaces_members_are_not_found_on_the_members_page() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Growth).await;
    let other = app.create_workspace(PlanTier::Growth).await;
    let b = sign_in(&app, &ws).await;
    let res =
        b.post(&app, &format!("/settings/workspace/members/{}", other.admin_id), &[("role", "agent")], true).await;
    assert_eq!(res.status(), 404);
    assert!(
        sql_bool(&app, &format!("(SELECT role FROM workspace_members WHERE user_id = {}) = 'admin'", other.admin_id))
            .await
    );
    let html = b.get(&app, "/settings/workspace/members").await.text().await.expect("html");
    assert!(!html.contains(&other.admin_email));
}

#[tokio::test]
async fn one_invitation_link_submitted_twice_at_once_sets_one_password() {
    let (app, sink) = TestApp::spawn_mailing(|_| {}).await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let res = app.post_json("/v1/users", &admin, &json!({"email": "twice@example.com", "role": "agent"})).await;
    assert_eq!(res.status(), 201);
    let token = sink.token_for("twice@example.com", "invitations", 0).await;
    let path = format!("/invitations/{token}");
    let statuses =
        crate::pages::submit_twice_at_once(&app, &path, ["the first chosen password", "the second chosen password"])
            .await;
    assert_eq!(statuses, [303, 410], "the link works once");
    let mut works = 0;
    for password in ["the first chosen password", "the second chosen password"] {
        let body = json!({"email": "twice@example.com", "password": password, "workspace_id": ws.id});
        let res = app.client.post(app.url("/v1/auth/login")).json(&body).send().await.expect("request");
        works += usize::from(res.status() == 200);
    }
    assert_eq!(works, 1, "one password was set");
    let joined = "(SELECT status = 'active' AND joined_at IS NOT NULL FROM workspace_members \
                  WHERE user_id = (SELECT id FROM users WHERE email = 'twice@example.com'))";
    assert!(sql_bool(&app, joined).await);
}

/// Two admins demoting (or deactivating) each other at the same moment: one wins, the other is
/// told the last admin stays (409), never a 500. Each change locks its target and the workspace's
/// active admins; taken in two steps, the two changes each held their target and waited for the
/// other's (a deadlock PostgreSQL broke by failing one of them).
#[tokio::test]
async fn two_admins_demoting_each_other_at_once_leave_one_admin_and_no_500() {
    let app = TestApp::spawn().await;
    for change in [json!({"role": "agent"}), json!({"active": false})] {
        let ws = app.create_workspace(PlanTier::Advanced).await;
        let (email, password) = add_member(&app, ws.id, "admin").await;
        let body = json!({"email": email, "password": password, "workspace_id": ws.id});
        let signed_in: Value = crate::credentials::login_raw(&app, &body).await.json().await.expect("json");
        let other = signed_in["user"]["id"].as_i64().expect("id");
        let tokens = [admin_token(&app, &ws).await, signed_in["token"].as_str().expect("token").to_owned()];
        let targets = [other, ws.admin_id];
        let sends = [0, 1]
            .map(|i| app.authed(Method::PATCH, &format!("/v1/users/{}", targets[i]), &tokens[i]).json(&change).send());
        // Both changes start while both memberships are held, so each reaches its first lock
        // before either can go on.
        let lock = format!(
            "SELECT user_id FROM workspace_members WHERE workspace_id = {} AND user_id IN ({}, {}) FOR UPDATE",
            ws.id, targets[0], targets[1]
        );
        let handles = crate::password_reset::while_locked(&app, &lock, async {
            let handles = sends.map(tokio::spawn);
            crate::password_reset::until_waiting(&app, 2).await;
            handles
        })
        .await;
        assert_eq!(crate::password_reset::sorted_statuses(handles).await, [200, 409], "{change}");
    }
}
