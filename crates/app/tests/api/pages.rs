//! The settings web app over HTTP: sign-in and its cookie, sign-out, CSRF refusals, the sign-in
//! throttle, plan notices, the workspace picker, the exports and the REST reference. The full
//! flows in a real browser are in `pages_browser.rs`.

use domain::workspace::PlanTier;
use reqwest::header::{CONTENT_TYPE, COOKIE, LOCATION, ORIGIN, SET_COOKIE};
use reqwest::StatusCode;

use crate::helpers::{TestApp, TestWorkspace};

mod business_hours_sla;
mod content;
mod reports;
mod teams;

/// A signed-in browser, reduced to what the server sees.
#[derive(Debug, Clone)]
pub struct Browser {
    /// `wms_session=…`
    pub cookie: String,
    /// The session's anti-forgery token, as the pages embed it.
    pub csrf: String,
}

/// The value of the first `name="csrf_token"` field of a page.
pub fn csrf_of(html: &str) -> String {
    let at = html.find("name=\"csrf_token\" value=\"").expect("a csrf field") + 25;
    html[at..].split('"').next().expect("value").to_owned()
}

/// `name=value` of the `Set-Cookie` for `name`, and the whole header.
pub fn set_cookie(res: &reqwest::Response, name: &str) -> Option<(String, String)> {
    res.headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{name}=")))
        .map(|v| (v.split(';').next().unwrap_or("").to_owned(), v.to_owned()))
}

/// A pre-session form's anti-forgery token as its page hands it out (sign-in, an invitation, a
/// password reset): the cookie (`name=value`) and the form's field.
#[derive(Debug, Clone)]
pub struct FormToken {
    /// `wms_presession_csrf=…`
    pub cookie: String,
    /// The value of the form's `csrf_token` field.
    pub csrf: String,
}

/// Opens the pre-session form at `path` in a browser without a session and keeps its token.
pub async fn form_token(app: &TestApp, path: &str) -> FormToken {
    let page = app.get(path).await;
    assert_eq!(page.status(), StatusCode::OK, "the form at {path}");
    let (cookie, _) = set_cookie(&page, "wms_presession_csrf").expect("the form's token cookie");
    let csrf = csrf_of(&page.text().await.expect("html"));
    FormToken { cookie, csrf }
}

impl FormToken {
    /// A post of `fields` to `path` with the token, as the page's form sends it.
    pub fn post(&self, app: &TestApp, path: &str, fields: &[(&str, &str)]) -> reqwest::RequestBuilder {
        let mut all = vec![("csrf_token", self.csrf.as_str())];
        all.extend_from_slice(fields);
        app.client.post(app.url(path)).header(COOKIE, &self.cookie).form(&all)
    }
}

/// Opens the pre-session form at `path` and submits `fields` through it.
pub async fn submit_form(app: &TestApp, path: &str, fields: &[(&str, &str)]) -> reqwest::Response {
    form_token(app, path).await.post(app, path, fields).send().await.expect("request")
}

/// Submits the form at `path` twice at the same time, each with a form token of its own and one
/// of `passwords`: the two statuses, sorted.
pub async fn submit_twice_at_once(app: &TestApp, path: &str, passwords: [&str; 2]) -> [u16; 2] {
    let (first, second) = (form_token(app, path).await, form_token(app, path).await);
    let (a, b) = tokio::join!(
        first.post(app, path, &[("password", passwords[0])]).send(),
        second.post(app, path, &[("password", passwords[1])]).send(),
    );
    let mut statuses = [a.expect("request").status().as_u16(), b.expect("request").status().as_u16()];
    statuses.sort_unstable();
    statuses
}

/// Submits the sign-in form; the response (303 on success).
pub async fn submit_login(app: &TestApp, email: &str, password: &str) -> reqwest::Response {
    submit_form(app, "/login", &[("email", email), ("password", password), ("next", "")]).await
}

/// Signs `ws`'s admin (or whoever its credentials are) in through the form.
pub async fn sign_in(app: &TestApp, ws: &TestWorkspace) -> Browser {
    let res = submit_login(app, &ws.admin_email, &ws.admin_password).await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER, "signed in");
    let (cookie, _) = set_cookie(&res, "wms_session").expect("session cookie");
    let page =
        app.client.get(app.url("/settings/workspace/rest-api")).header(COOKIE, &cookie).send().await.expect("page");
    assert_eq!(page.status(), StatusCode::OK);
    let csrf = csrf_of(&page.text().await.expect("html"));
    Browser { cookie, csrf }
}

impl Browser {
    /// `GET path` with the cookie.
    pub async fn get(&self, app: &TestApp, path: &str) -> reqwest::Response {
        app.client.get(app.url(path)).header(COOKIE, &self.cookie).send().await.expect("request")
    }

    /// Posts a form with the cookie; `with_token` adds the anti-forgery field.
    pub async fn post(
        &self,
        app: &TestApp,
        path: &str,
        fields: &[(&str, &str)],
        with_token: bool,
    ) -> reqwest::Response {
        let mut all: Vec<(&str, &str)> = fields.to_vec();
        if with_token {
            all.push(("csrf_token", &self.csrf));
        }
        app.client.post(app.url(path)).header(COOKIE, &self.cookie).form(&all).send().await.expect("request")
    }
}

async fn key_count(app: &TestApp, b: &Browser, ws: i64) -> usize {
    let res = b.get(app, &format!("/api/workspaces/{ws}/api-keys")).await;
    assert_eq!(res.status(), 200);
    res.json::<serde_json::Value>().await.expect("json")["data"].as_array().map_or(0, Vec::len)
}

#[tokio::test]
async fn sign_in_sets_a_hardened_session_cookie_and_sign_out_ends_the_session_on_the_server() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let res = submit_login(&app, &ws.admin_email, &ws.admin_password).await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(res.headers()[LOCATION], "/", "home, which sends each role to its page");
    let (cookie, header) = set_cookie(&res, "wms_session").expect("session cookie");
    for attribute in ["HttpOnly", "SameSite=Lax", "Secure", "Path=/"] {
        assert!(header.contains(attribute), "{attribute} in {header}");
    }
    let page =
        app.client.get(app.url("/settings/workspace/rest-api")).header(COOKIE, &cookie).send().await.expect("page");
    assert_eq!(page.status(), 200);
    let html = page.text().await.expect("html");
    assert!(html.contains(&ws.admin_email));
    let b = Browser { csrf: csrf_of(&html), cookie };

    let out = b.post(&app, "/logout", &[], true).await;
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    // The same cookie, replayed, signs nobody in: the session was revoked in the database.
    let after = b.get(&app, "/settings/workspace/api-keys").await;
    assert_eq!(after.status(), StatusCode::SEE_OTHER);
    assert!(after.headers()[LOCATION].to_str().unwrap_or("").starts_with("/login"));
    let api = b.get(&app, &format!("/api/workspaces/{}/api-keys", ws.id)).await;
    assert_eq!(api.status(), 401);
}

#[tokio::test]
async fn a_wrong_password_shows_one_message_beside_the_form() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Growth).await;
    let res = submit_login(&app, &ws.admin_email, "wrong password").await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert!(set_cookie(&res, "wms_session").is_none());
    assert!(res.text().await.expect("html").contains("The e-mail or password is wrong."));
    let unknown = submit_login(&app, "nobody@test.wms", "wrong password").await;
    assert!(unknown.text().await.expect("html").contains("The e-mail or password is wrong."));
}

#[tokio::test]
async fn failed_sign_ins_are_throttled_like_the_login_api() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Growth).await;
    for _ in 0..5 {
        assert_eq!(submit_login(&app, &ws.admin_email, "wrong").await.status(), StatusCode::UNAUTHORIZED);
    }
    let refused = submit_login(&app, &ws.admin_email, &ws.admin_password).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers().contains_key("retry-after"));
    assert!(refused.text().await.expect("html").contains("Too many failed sign-ins"));
    // The API shares the counter.
    let api = app
        .client
        .post(app.url("/v1/auth/login"))
        .json(&serde_json::json!({"email": ws.admin_email, "password": ws.admin_password}))
        .send()
        .await
        .expect("request");
    assert_eq!(api.status(), 429);
}

#[tokio::test]
async fn the_sign_in_form_without_its_token_is_refused() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Growth).await;
    let res = app
        .client
        .post(app.url("/login"))
        .form(&[("email", ws.admin_email.as_str()), ("password", ws.admin_password.as_str())])
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert!(set_cookie(&res, "wms_session").is_none());
}

#[tokio::test]
async fn a_cross_site_form_post_without_the_token_is_refused() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let b = sign_in(&app, &ws).await;
    // What a hostile page's auto-submitting form sends (had the browser attached the cookie).
    let forged = app
        .client
        .post(app.url("/settings/workspace/api-keys"))
        .header(COOKIE, &b.cookie)
        .header(ORIGIN, "https://evil.example")
        .header("sec-fetch-site", "cross-site")
        .form(&[("name", "stolen")])
        .send()
        .await
        .expect("request");
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    assert!(forged.headers()[CONTENT_TYPE].to_str().unwrap_or("").starts_with("text/html"));
    // Same site but without the token, and with the token but from another origin: refused too.
    assert_eq!(b.post(&app, "/settings/workspace/api-keys", &[("name", "no token")], false).await.status(), 403);
    let other_origin = app
        .client
        .post(app.url("/settings/workspace/api-keys"))
        .header(COOKIE, &b.cookie)
        .header(ORIGIN, "https://evil.example")
        .form(&[("name", "wrong origin"), ("csrf_token", b.csrf.as_str())])
        .send()
        .await
        .expect("request");
    assert_eq!(other_origin.status(), 403);
    let wrong_token =
        b.post(&app, "/settings/workspace/api-keys", &[("name", "x"), ("csrf_token", "AAAA")], false).await;
    assert_eq!(wrong_token.status(), 403);
    assert_eq!(key_count(&app, &b, ws.id).await, 0);
    // The real form works.
    let ok = b.post(&app, "/settings/workspace/api-keys", &[("name", "real"), ("expires", "")], true).await;
    assert_eq!(ok.status(), StatusCode::CREATED);
    assert_eq!(key_count(&app, &b, ws.id).await, 1);
}

#[tokio::test]
async fn the_settings_api_and_the_assistant_take_the_session_cookie_but_not_from_another_site() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let b = sign_in(&app, &ws).await;
    let path = format!("/api/workspaces/{}/api-keys", ws.id);
    let body = serde_json::json!({"name": "from script"});
    // Another site's page (its Origin, another scheme, or Sec-Fetch-Site, a sibling subdomain's
    // `same-site` included) without the session's token: refused.
    let other_scheme = app.address.replace("http://", "https://");
    for (name, value) in [
        (ORIGIN.as_str(), "https://evil.example"),
        (ORIGIN.as_str(), other_scheme.as_str()),
        ("sec-fetch-site", "cross-site"),
        ("sec-fetch-site", "same-site"),
    ] {
        let refused = app
            .client
            .post(app.url(&path))
            .header(COOKIE, &b.cookie)
            .header(name, value)
            .json(&body)
            .send()
            .await
            .expect("request");
        crate::helpers::problem(refused, 403, "forbidden").await;
    }
    // A client holding the cookie (no browser's word of another site), or this site's own page.
    let own_origin = app.address.clone();
    for origin in [None, Some(own_origin.as_str())] {
        let mut req = app.client.post(app.url(&path)).header(COOKIE, &b.cookie).json(&body);
        if let Some(o) = origin {
            req = req.header(ORIGIN, o);
        }
        assert_eq!(req.send().await.expect("request").status(), 201, "{origin:?}");
    }
    // With the session's token, from anywhere.
    let ok = app
        .client
        .post(app.url(&path))
        .header(COOKIE, &b.cookie)
        .header("x-csrf-token", &b.csrf)
        .header(ORIGIN, "https://elsewhere.example")
        .json(&body)
        .send()
        .await
        .expect("request");
    assert_eq!(ok.status(), 201);
    let key_id = ok.json::<serde_json::Value>().await.expect("json")["id"].as_i64().expect("id");
    // Without JSON and without any origin (a form an old browser posts from anywhere): refused.
    let revoke = format!("{path}/{key_id}/revoke");
    let bare = app.client.post(app.url(&revoke)).header(COOKIE, &b.cookie).send().await.expect("request");
    crate::helpers::problem(bare, 403, "forbidden").await;
    let same = app.client.post(app.url(&revoke)).header(COOKIE, &b.cookie).header("sec-fetch-site", "same-origin");
    assert!(same.send().await.expect("request").status().is_success(), "this site's own page");
    let tool = serde_json::json!({"tool": "list_channels", "arguments": {}});
    let res = app
        .client
        .post(app.url(&format!("/workspaces/{}/co-admin/tools/execute", ws.id)))
        .header(COOKIE, &b.cookie)
        .json(&tool)
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200, "the assistant takes the session cookie");
    // The session works in its own workspace only.
    let other = app.create_workspace(PlanTier::Advanced).await;
    let foreign = b.get(&app, &format!("/api/workspaces/{}/api-keys", other.id)).await;
    crate::helpers::problem(foreign, 404, "not_found").await;
}

#[tokio::test]
async fn signing_in_clears_the_login_token_cookie_on_the_path_it_was_set_on() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Growth).await;
    let page = app.get("/login").await;
    let (_, set) = set_cookie(&page, "wms_presession_csrf").expect("login csrf cookie");
    assert!(set.contains("Path=/login"), "{set}");

    let res = submit_login(&app, &ws.admin_email, &ws.admin_password).await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    // A browser drops a cookie only for a removal on the same path: one for `/` would leave it.
    let (value, cleared) = set_cookie(&res, "wms_presession_csrf").expect("a removal of the login cookie");
    assert_eq!(value, "wms_presession_csrf=");
    for attribute in ["Path=/login", "Max-Age=0"] {
        assert!(cleared.contains(attribute), "{attribute} in {cleared}");
    }
    assert!(!cleared.contains("Path=/;"), "{cleared}");
}

/// Signing in with nothing else asked for goes home, which sends each role to a page it may use:
/// an agent to the analytics (the API keys page is for admins), an admin to the settings.
#[tokio::test]
async fn signing_in_lands_each_role_on_a_page_it_may_use() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let (agent_email, agent_password) = crate::credentials::add_member(&app, ws.id, "agent").await;
    for (email, password, page) in [
        (agent_email.as_str(), agent_password.as_str(), "/analytics"),
        (ws.admin_email.as_str(), ws.admin_password.as_str(), "/settings/workspace/api-keys"),
    ] {
        let res = submit_login(&app, email, password).await;
        assert_eq!(res.status(), StatusCode::SEE_OTHER);
        let home = res.headers()[LOCATION].to_str().expect("location").to_owned();
        let (cookie, _) = set_cookie(&res, "wms_session").expect("session cookie");
        let there = app.client.get(app.url(&home)).header(COOKIE, &cookie).send().await.expect("home");
        assert_eq!(there.headers()[LOCATION], page, "{email}");
        let shown = app.client.get(app.url(page)).header(COOKIE, &cookie).send().await.expect("page");
        assert_eq!(shown.status(), StatusCode::OK, "{email} may use {page}");
    }
}

/// The sign-in form open in two tabs: both keep working (the second rendering reuses the token
/// the first one set, instead of voiding it), and a message the page before left is shown.
#[tokio::test]
async fn the_sign_in_form_works_from_two_tabs_and_shows_a_message_left_for_it() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let first = form_token(&app, "/login").await;
    let second = app.client.get(app.url("/login")).header(COOKIE, &first.cookie).send().await.expect("second tab");
    assert_eq!(csrf_of(&second.text().await.expect("html")), first.csrf, "the same token in both tabs");
    let res = first
        .post(&app, "/login", &[("email", &ws.admin_email), ("password", &ws.admin_password), ("next", "")])
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), StatusCode::SEE_OTHER, "the first tab's form is still good");
    // A message left for the sign-in page (after a password reset, say) is shown there.
    let notice = app
        .client
        .get(app.url("/login"))
        .header(COOKIE, "wms_flash=Your%20password%20was%20changed")
        .send()
        .await
        .expect("page");
    assert!(notice.text().await.expect("html").contains("Your password was changed"));
}

/// A form posted after the session ended (a key's revocation, say) sends the browser to sign in
/// and then back to the page the form was on: the form's action answers no `GET`.
#[tokio::test]
async fn a_form_posted_after_the_session_ended_comes_back_to_its_page_after_sign_in() {
    let app = TestApp::spawn().await;
    let host = app.address.trim_start_matches("http://").to_owned();
    let post = |referer: Option<String>| {
        let mut req = app.client.post(app.url("/settings/workspace/api-keys/7/revoke")).form(&[("csrf_token", "x")]);
        if let Some(r) = referer {
            req = req.header(reqwest::header::REFERER, r);
        }
        req.send()
    };
    let res = post(Some(format!("http://{host}/settings/workspace/api-keys?cursor=abc"))).await.expect("post");
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(res.headers()[LOCATION], "/login?next=%2Fsettings%2Fworkspace%2Fapi-keys%3Fcursor%3Dabc");
    // Another site's page, or none: home.
    for referer in [Some("http://evil.example/settings/workspace/api-keys".to_owned()), None] {
        let res = post(referer).await.expect("post");
        assert_eq!(res.headers()[LOCATION], "/login?next=%2F");
    }
}

/// A mistyped settings address in a browser is the pages' own 404 page, with its way back; an API
/// client still gets problem+json.
#[tokio::test]
async fn a_mistyped_settings_page_is_an_html_404_for_a_browser() {
    let app = TestApp::spawn().await;
    let page = app.client.get(app.url("/settings/workspace/typo")).header("accept", "text/html").send().await;
    let page = page.expect("request");
    assert_eq!(page.status(), StatusCode::NOT_FOUND);
    assert!(page.headers()[CONTENT_TYPE].to_str().expect("type").starts_with("text/html"));
    assert!(page.headers().contains_key("content-security-policy"), "the pages' security headers");
    assert!(page.text().await.expect("html").contains("href=\"/\""), "a way back");
    let api = app.client.get(app.url("/settings/workspace/typo")).send().await.expect("request");
    crate::helpers::problem(api, 404, "not_found").await;
}

/// The channels page shows 100 channels a page, with a link to the rest.
#[tokio::test]
async fn the_channels_page_pages_through_every_channel() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    crate::credentials::sql(
        &app,
        &format!(
            "INSERT INTO channels (workspace_id, channel_type, display_name, identifier, status)
             SELECT {}, 'messenger', 'Page ' || g, 'page-' || g, 'active' FROM generate_series(1, 101) g",
            ws.id
        ),
    )
    .await;
    let b = sign_in(&app, &ws).await;
    let first = b.get(&app, "/settings/workspace/channels").await.text().await.expect("html");
    assert!(first.contains("Page 100") && !first.contains("Page 101<"), "the first hundred");
    let at = first.find("/settings/workspace/channels?cursor=").expect("a link to the rest");
    let link = first[at..].split('"').next().expect("href").replace("&amp;", "&");
    let second = b.get(&app, &link).await.text().await.expect("html");
    assert!(second.contains("Page 101") && !second.contains("Page 100<"), "the rest");
    assert!(!second.contains("More channels"), "nothing after the last page");
}
