//! wms as the OAuth 2.1 authorization server of MCP clients (docs/oauth.md): discovery from the
//! MCP endpoint's 401, registration, consent, codes, tokens, refresh rotation, revocation, and the
//! RFC 6749 answers to bad input. The whole flow in a real browser with the official MCP client
//! is `oauth_browser.rs`.

use reqwest::header::{CONTENT_TYPE, COOKIE, LOCATION, WWW_AUTHENTICATE};
use serde_json::{json, Value};

use crate::credentials::{sql, sql_bool};
use crate::helpers::{TestApp, TestWorkspace};
use crate::pages::{csrf_of, sign_in, Browser};
use domain::workspace::PlanTier;

/// RFC 7636 appendix B.
pub const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const REDIRECT: &str = "http://127.0.0.1:9/callback";

fn mcp_path(ws: i64) -> String {
    format!("/workspaces/{ws}/co-admin/mcp")
}

/// A registered client, a workspace and its admin signed in.
struct Flow {
    app: TestApp,
    ws: TestWorkspace,
    browser: Browser,
    client_id: String,
}

impl Flow {
    async fn new() -> Flow {
        let app = TestApp::spawn().await;
        let ws = app.create_workspace(PlanTier::Growth).await;
        let browser = sign_in(&app, &ws).await;
        let client_id = register(&app, &json!({"client_name": "Test Client", "redirect_uris": [REDIRECT]})).await;
        Flow { app, ws, browser, client_id }
    }

    fn resource(&self, ws: i64) -> String {
        self.app.url(&mcp_path(ws))
    }

    fn authorize_query(&self, ws: i64) -> Vec<(&'static str, String)> {
        vec![
            ("response_type", "code".into()),
            ("client_id", self.client_id.clone()),
            ("redirect_uri", REDIRECT.into()),
            ("code_challenge", CHALLENGE.into()),
            ("code_challenge_method", "S256".into()),
            ("scope", "assistant:read".into()),
            ("state", "st4te".into()),
            ("resource", self.resource(ws)),
        ]
    }

    async fn authorize_get(&self, query: &[(&str, String)]) -> reqwest::Response {
        self.app
            .client
            .get(self.app.url("/oauth/authorize"))
            .query(query)
            .header(COOKIE, &self.browser.cookie)
            .send()
            .await
            .expect("request")
    }

    /// Shows the consent page and allows: the redirect's query.
    async fn consent(&self, query: &[(&str, String)]) -> Vec<(String, String)> {
        let page = self.authorize_get(query).await;
        assert_eq!(page.status(), 200, "consent page");
        let csrf = csrf_of(&page.text().await.expect("html"));
        let mut form: Vec<(&str, String)> = query.to_vec();
        form.push(("csrf_token", csrf));
        form.push(("decision", "allow".into()));
        let res = self
            .app
            .client
            .post(self.app.url("/oauth/authorize"))
            .header(COOKIE, &self.browser.cookie)
            .form(&form)
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), 303);
        let location = res.headers().get(LOCATION).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        assert!(location.starts_with(REDIRECT), "{location}");
        query_of(&location)
    }

    async fn code(&self) -> String {
        let back = self.consent(&self.authorize_query(self.ws.id)).await;
        assert!(back.contains(&("state".into(), "st4te".into())), "{back:?}");
        back.into_iter().find(|(k, _)| k == "code").expect("code").1
    }

    async fn token(&self, form: &[(&str, &str)]) -> (u16, Value) {
        token(&self.app, form).await
    }

    async fn exchange(&self, code: &str, verifier: &str) -> (u16, Value) {
        let resource = self.resource(self.ws.id);
        self.token(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("client_id", &self.client_id),
            ("code_verifier", verifier),
            ("resource", &resource),
        ])
        .await
    }

    /// A full grant: (access token, refresh token).
    async fn tokens(&self) -> (String, String) {
        let (status, body) = self.exchange(&self.code().await, VERIFIER).await;
        assert_eq!(status, 200, "{body}");
        (body["access_token"].as_str().expect("access").into(), body["refresh_token"].as_str().expect("refresh").into())
    }

    async fn refresh(&self, refresh: &str) -> (u16, Value) {
        self.token(&[("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", &self.client_id)]).await
    }

    async fn tools_list(&self, ws: i64, token: &str) -> reqwest::Response {
        self.app
            .client
            .post(self.app.url(&mcp_path(ws)))
            .bearer_auth(token)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
            .send()
            .await
            .expect("request")
    }
}

/// An app's access token for `ws`, granted by the member signed in as `browser` (for the access
/// walk's app caller).
pub async fn app_token(app: &TestApp, ws: i64, browser: &Browser) -> String {
    let client_id = register(app, &json!({"client_name": "Walker", "redirect_uris": [REDIRECT]})).await;
    let resource = app.url(&mcp_path(ws));
    let form = vec![
        ("response_type", "code".to_owned()),
        ("client_id", client_id.clone()),
        ("redirect_uri", REDIRECT.into()),
        ("code_challenge", CHALLENGE.into()),
        ("code_challenge_method", "S256".into()),
        ("resource", resource.clone()),
        ("csrf_token", browser.csrf.clone()),
        ("decision", "allow".into()),
    ];
    let res = app.client.post(app.url("/oauth/authorize")).header(COOKIE, &browser.cookie).form(&form).send().await;
    let location = res.expect("request").headers().get(LOCATION).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let code = query_of(&location).into_iter().find(|(k, _)| k == "code").expect("code").1;
    let (status, body) = token(
        app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &client_id),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().expect("access token").to_owned()
}

fn query_of(url: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(url).map(|u| u.query_pairs().into_owned().collect()).unwrap_or_default()
}

async fn register(app: &TestApp, body: &Value) -> String {
    let res = app.client.post(app.url("/oauth/register")).json(body).send().await.expect("request");
    assert_eq!(res.status(), 201);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["token_endpoint_auth_method"], "none");
    body["client_id"].as_str().expect("client_id").to_owned()
}

async fn token(app: &TestApp, form: &[(&str, &str)]) -> (u16, Value) {
    let res = app.client.post(app.url("/oauth/token")).form(form).send().await.expect("request");
    let status = res.status().as_u16();
    let ct = res.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert_eq!(ct, "application/json", "never problem+json");
    (status, res.json().await.expect("json"))
}

/// An RFC 6749 error body: `error` is `code`, with a description and nothing of problem+json.
fn oauth_error(status: u16, body: &Value, want_status: u16, code: &str) {
    assert_eq!((status, body["error"].as_str()), (want_status, Some(code)), "{body}");
    assert!(body["error_description"].is_string(), "{body}");
    assert!(body.get("type").is_none() && body.get("code").is_none(), "{body}");
}

/// A token request's form, and the status and `error` it gets.
type TokenCase<'a> = (Vec<(&'a str, &'a str)>, u16, &'a str);

fn is_token(t: &str, prefix: &str) -> bool {
    t.starts_with(prefix) && t.len() >= 45 && t[5..].bytes().all(|b| b.is_ascii_alphanumeric())
}

#[tokio::test]
async fn the_mcp_401_leads_to_the_resource_and_authorization_server_metadata() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Free).await;
    let res = app
        .client
        .post(app.url(&mcp_path(ws.id)))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 401);
    let header = res.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let metadata_url = app.url(&format!("/.well-known/oauth-protected-resource/workspaces/{}/co-admin/mcp", ws.id));
    assert!(header.starts_with(&format!("Bearer resource_metadata=\"{metadata_url}\"")), "{header}");
    assert!(header.contains("realm=\"wms\"") && header.contains("scope=\"assistant:read\""), "{header}");

    // A bad token on the MCP endpoint points there too; other assistant endpoints do not.
    let bad = app.client.post(app.url(&mcp_path(ws.id))).bearer_auth("wmso_nope").send().await.expect("request");
    let header = bad.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert!(header.contains("resource_metadata=") && header.contains("error=\"invalid_token\""), "{header}");
    let caps = app.get(&format!("/workspaces/{}/co-admin/capabilities", ws.id)).await;
    let header = caps.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert_eq!(header, "Bearer realm=\"wms\"");

    let prm: Value = app.client.get(&metadata_url).send().await.expect("request").json().await.expect("json");
    assert_eq!(prm["resource"], app.url(&mcp_path(ws.id)));
    assert_eq!(prm["authorization_servers"], json!([app.address]));
    assert_eq!(prm["scopes_supported"], json!(["assistant:read"]));

    let asm: Value =
        app.get("/.well-known/oauth-authorization-server").await.json().await.expect("authorization server metadata");
    assert_eq!(asm["issuer"], app.address);
    assert_eq!(asm["authorization_endpoint"], app.url("/oauth/authorize"));
    assert_eq!(asm["token_endpoint"], app.url("/oauth/token"));
    assert_eq!(asm["registration_endpoint"], app.url("/oauth/register"));
    assert_eq!(asm["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(asm["grant_types_supported"], json!(["authorization_code", "refresh_token"]));
}

#[tokio::test]
async fn discovery_is_built_on_the_servers_own_address_whatever_the_request_claims() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Free).await;
    let forged = [
        ("x-forwarded-host", "evil.example"),
        ("forwarded", "host=evil.example;proto=https"),
        ("host", "evil.example"),
    ];
    for (name, value) in forged {
        let res = app
            .client
            .post(app.url(&mcp_path(ws.id)))
            .header(name, value)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
            .send()
            .await
            .expect("request");
        let header = res.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        assert!(header.contains(&format!("resource_metadata=\"{}/", app.address)), "{name}: {header}");
        let path = format!("/.well-known/oauth-protected-resource/workspaces/{}/co-admin/mcp", ws.id);
        let app = &app;
        let document = |path: String| async move {
            let res = app.client.get(app.url(&path)).header(name, value).send().await.expect("request");
            res.json::<Value>().await.expect("json")
        };
        let prm = document(path).await;
        assert_eq!(prm["authorization_servers"], json!([app.address]), "{name}");
        assert_eq!(prm["resource"], app.url(&mcp_path(ws.id)), "{name}");
        let asm = document("/.well-known/oauth-authorization-server".to_owned()).await;
        assert_eq!(asm["issuer"], app.address, "{name}");
        assert!(!asm.to_string().contains("evil.example"), "{name}: {asm}");
    }
}

#[tokio::test]
async fn a_granted_token_lists_the_tools_of_its_workspace_and_is_stored_as_digests() {
    let f = Flow::new().await;
    let page = f.authorize_get(&f.authorize_query(f.ws.id)).await;
    let csp = page.headers().get("content-security-policy").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert!(csp.contains("form-action 'self' http://127.0.0.1:9"), "{csp}");
    let html = page.text().await.expect("html");
    assert!(html.contains("Test Client") && html.contains("assistant:read") && html.contains("Workspace "), "{html}");

    let (status, body) = f.exchange(&f.code().await, VERIFIER).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!((body["token_type"].as_str(), body["expires_in"].as_i64()), (Some("Bearer"), Some(3600)));
    assert_eq!(body["scope"], "assistant:read");
    let (access, refresh) = (body["access_token"].as_str().expect("a"), body["refresh_token"].as_str().expect("r"));
    assert!(is_token(access, "wmso_") && is_token(refresh, "wmsr_"), "{body}");

    let res = f.tools_list(f.ws.id, access).await;
    assert_eq!(res.status(), 200);
    // Counted in the member's window, like the member's own requests.
    assert!(res.headers().get("ratelimit").is_some(), "{:?}", res.headers());
    let listed: Value = res.json().await.expect("json");
    assert!(listed["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{listed}");
    // The grant is `assistant:read` only, yet the admin's app may run the admins' report tool:
    // within the grant, the member's role decides (docs/access.md, "Assistant tools").
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "get_conversation_report", "arguments": {"group_by": "agent"}}});
    let res = f.app.client.post(f.app.url(&mcp_path(f.ws.id))).bearer_auth(access).json(&call).send().await;
    let called: Value = res.expect("request").json().await.expect("json");
    assert_eq!(called["result"]["isError"], false, "{called}");
    assert!(called["result"]["structuredContent"]["groups"].is_array(), "{called}");
    let caps = f
        .app
        .client
        .get(f.app.url(&format!("/workspaces/{}/co-admin/capabilities", f.ws.id)))
        .bearer_auth(access)
        .send()
        .await
        .expect("request");
    assert_eq!(caps.status(), 200);

    // Digests only; the grant was audited and noted as used.
    for secret in [access, refresh] {
        assert!(
            !sql_bool(
                &f.app,
                &format!("EXISTS (SELECT 1 FROM oauth_tokens WHERE convert_to('{secret}', 'UTF8') = token_digest)")
            )
            .await
        );
        assert!(
            sql_bool(
                &f.app,
                &format!(
                    "EXISTS (SELECT 1 FROM oauth_tokens WHERE token_digest = sha256(convert_to('{secret}', 'UTF8')))"
                )
            )
            .await
        );
    }
    assert!(
        sql_bool(
            &f.app,
            "(SELECT count(*) FROM audit_events WHERE action = 'oauth.granted' AND actor_type = 'user') = 1"
        )
        .await
    );
    assert!(sql_bool(&f.app, "(SELECT last_used_at IS NOT NULL FROM oauth_grants)").await);
    assert!(
        sql_bool(
            &f.app,
            "NOT EXISTS (SELECT 1 FROM audit_events WHERE details::text ~ 'wms[or]_' OR user_agent ~ 'wms[or]_')"
        )
        .await,
        "no token in the audit log"
    );
}

#[tokio::test]
async fn a_redirect_uri_not_registered_is_refused_without_redirecting() {
    let f = Flow::new().await;
    let mut query = f.authorize_query(f.ws.id);
    query[2].1 = "http://127.0.0.1:9/elsewhere".into();
    let res = f.authorize_get(&query).await;
    assert_eq!(res.status(), 400);
    assert!(res.headers().get(LOCATION).is_none());
    assert!(res.text().await.expect("html").contains("redirect_uri is not one the app registered"));
    query[1].1 = "unknown-client-id-123".into();
    let res = f.authorize_get(&query).await;
    assert_eq!((res.status().as_u16(), res.headers().get(LOCATION).is_none()), (400, true));
    // Signed out, the same request is refused before any sign-in page.
    let res = f.app.client.get(f.app.url("/oauth/authorize")).query(&query).send().await.expect("request");
    assert_eq!((res.status().as_u16(), res.headers().get(LOCATION).is_none()), (400, true));
    assert!(sql_bool(&f.app, "(SELECT count(*) FROM oauth_grants) = 0").await);
}

#[tokio::test]
async fn signed_out_members_sign_in_first_and_come_back() {
    let f = Flow::new().await;
    let query = f.authorize_query(f.ws.id);
    let res = f.app.client.get(f.app.url("/oauth/authorize")).query(&query).send().await.expect("request");
    assert_eq!(res.status(), 303);
    let location = res.headers().get(LOCATION).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert!(location.starts_with("/login?next=%2Foauth%2Fauthorize%3F"), "{location}");
}

#[tokio::test]
async fn pkce_is_required_and_the_verifier_checked() {
    let f = Flow::new().await;
    for (i, value) in [(3, None), (4, Some("plain")), (3, Some("too-short"))] {
        let mut query = f.authorize_query(f.ws.id);
        match value {
            None => {
                query.remove(i);
            }
            Some(v) => query[i].1 = v.into(),
        }
        let res = f.authorize_get(&query).await;
        assert_eq!(res.status(), 303, "{query:?}");
        let back = query_of(res.headers().get(LOCATION).and_then(|v| v.to_str().ok()).unwrap_or(""));
        assert!(back.contains(&("error".into(), "invalid_request".into())), "{back:?}");
        assert!(back.contains(&("state".into(), "st4te".into())), "{back:?}");
    }
    let code = f.code().await;
    let resource = f.resource(f.ws.id);
    let (status, body) = f
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &f.client_id),
            ("resource", &resource),
        ])
        .await;
    oauth_error(status, &body, 400, "invalid_request");
    let wrong = "x".repeat(43);
    let (status, body) = f.exchange(&code, &wrong).await;
    oauth_error(status, &body, 400, "invalid_grant");
    // A refused exchange leaves the code usable by its rightful holder.
    let (status, body) = f.exchange(&code, VERIFIER).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn a_code_works_once_and_a_replay_revokes_what_it_issued() {
    let f = Flow::new().await;
    let code = f.code().await;
    let (status, body) = f.exchange(&code, VERIFIER).await;
    assert_eq!(status, 200);
    let access = body["access_token"].as_str().expect("access").to_owned();
    let (status, body) = f.exchange(&code, VERIFIER).await;
    oauth_error(status, &body, 400, "invalid_grant");
    assert_eq!(f.tools_list(f.ws.id, &access).await.status(), 401);
}

#[tokio::test]
async fn a_token_works_only_on_the_assistant_of_its_workspace() {
    let f = Flow::new().await;
    let (access, refresh) = f.tokens().await;
    let other = f.app.create_workspace(PlanTier::Advanced).await;
    let res = f.tools_list(other.id, &access).await;
    crate::helpers::problem(res, 401, "invalid_token").await;
    // Elsewhere: /v1, the settings API, and the refresh token anywhere.
    for (path, token) in [
        ("/v1/channels".to_owned(), access.as_str()),
        (format!("/api/workspaces/{}/api-keys", f.ws.id), access.as_str()),
        ("/v1/channels".to_owned(), refresh.as_str()),
        (format!("/workspaces/{}/co-admin/capabilities", f.ws.id), refresh.as_str()),
    ] {
        let res = f.app.client.get(f.app.url(&path)).bearer_auth(token).send().await.expect("request");
        crate::helpers::problem(res, 401, "invalid_token").await;
    }
    // Pages read only the session: an app's token is no sign-in there.
    let page = f.app.client.get(f.app.url("/settings/account/connected-apps")).bearer_auth(&access).send().await;
    assert_eq!(page.expect("request").status(), 303);
}

#[tokio::test]
async fn a_refresh_rotates_and_a_reused_refresh_token_revokes_the_grant() {
    let f = Flow::new().await;
    let (_, first) = f.tokens().await;
    let (status, body) = f.refresh(&first).await;
    assert_eq!(status, 200, "{body}");
    let second = body["refresh_token"].as_str().expect("refresh").to_owned();
    let access = body["access_token"].as_str().expect("access").to_owned();
    assert_ne!(second, first);
    assert_eq!(f.tools_list(f.ws.id, &access).await.status(), 200);

    let (status, body) = f.refresh(&first).await;
    oauth_error(status, &body, 400, "invalid_grant");
    crate::helpers::problem(f.tools_list(f.ws.id, &access).await, 401, "token_revoked").await;
    let (status, body) = f.refresh(&second).await;
    oauth_error(status, &body, 400, "invalid_grant");
    assert!(
        sql_bool(&f.app, "(SELECT count(*) FROM audit_events WHERE action = 'oauth.revoked' AND actor_type = 'system' AND details->>'reason' = 'refresh_token_reused') = 1").await
    );
}

#[tokio::test]
async fn revoking_on_the_connected_apps_page_ends_the_apps_access() {
    let f = Flow::new().await;
    let (access, refresh) = f.tokens().await;
    let page = f.browser.get(&f.app, "/settings/account/connected-apps").await;
    assert_eq!(page.status(), 200);
    let html = page.text().await.expect("html");
    assert!(html.contains("Test Client") && html.contains("assistant:read"), "{html}");
    let grant: i64 = {
        let at = html.find("data-grant=\"").expect("a grant row") + 12;
        html[at..].split('"').next().expect("id").parse().expect("number")
    };
    let path = format!("/settings/account/connected-apps/{grant}/revoke");
    assert_eq!(f.browser.post(&f.app, &path, &[], false).await.status(), 403, "the form's token is required");
    assert_eq!(f.tools_list(f.ws.id, &access).await.status(), 200);
    assert_eq!(f.browser.post(&f.app, &path, &[], true).await.status(), 303);

    crate::helpers::problem(f.tools_list(f.ws.id, &access).await, 401, "token_revoked").await;
    let (status, body) = f.refresh(&refresh).await;
    oauth_error(status, &body, 400, "invalid_grant");
    let html = f.browser.get(&f.app, "/settings/account/connected-apps").await.text().await.expect("html");
    assert!(html.contains("connected-apps-empty"), "{html}");
    assert_eq!(f.browser.post(&f.app, &path, &[], true).await.status(), 404);
    assert!(
        sql_bool(
            &f.app,
            "(SELECT count(*) FROM audit_events WHERE action = 'oauth.revoked' AND actor_type = 'user') = 1"
        )
        .await
    );

    // Another member's grant is not found for this one.
    let other = f.app.create_workspace(PlanTier::Free).await;
    let stranger = sign_in(&f.app, &other).await;
    let _ = f.tokens().await;
    let last = format!("/settings/account/connected-apps/{}/revoke", grant + 1);
    assert_eq!(stranger.post(&f.app, &last, &[], true).await.status(), 404);
    assert!(sql_bool(&f.app, "(SELECT count(*) FROM oauth_grants WHERE revoked_at IS NULL) = 1").await);
}

#[tokio::test]
async fn a_grant_works_only_while_its_member_and_workspace_are_active() {
    let f = Flow::new().await;
    let (access, refresh) = f.tokens().await;
    assert_eq!(f.tools_list(f.ws.id, &access).await.status(), 200);
    let member =
        |status: &str| format!("UPDATE workspace_members SET status = '{status}' WHERE user_id = {}", f.ws.admin_id);
    let workspace = |on: bool| format!("UPDATE workspaces SET is_active = {on} WHERE id = {}", f.ws.id);
    for (off, on) in [(member("deactivated"), member("active")), (workspace(false), workspace(true))] {
        sql(&f.app, &off).await;
        let res = f.tools_list(f.ws.id, &access).await;
        let challenge = res.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        assert!(challenge.contains("resource_metadata="), "the client is told to sign in again: {challenge}");
        crate::helpers::problem(res, 401, "invalid_token").await;
        let (status, body) = f.refresh(&refresh).await;
        oauth_error(status, &body, 400, "invalid_grant");
        // The refusal changed nothing: back in standing, the same tokens work again.
        sql(&f.app, &on).await;
        assert_eq!(f.tools_list(f.ws.id, &access).await.status(), 200, "{off}");
    }
    let (status, body) = f.refresh(&refresh).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn a_member_of_another_workspace_cannot_grant_it() {
    let f = Flow::new().await;
    let other = f.app.create_workspace(PlanTier::Free).await;
    let res = f.authorize_get(&f.authorize_query(other.id)).await;
    assert_eq!(res.status(), 403);
    assert!(res.headers().get(LOCATION).is_none());
    let mut query = f.authorize_query(f.ws.id);
    query[7].1 = "https://evil.example/workspaces/1/co-admin/mcp".into();
    let res = f.authorize_get(&query).await;
    let back = query_of(res.headers().get(LOCATION).and_then(|v| v.to_str().ok()).unwrap_or(""));
    assert!(back.contains(&("error".into(), "invalid_target".into())), "{back:?}");
}

#[tokio::test]
async fn the_consent_form_needs_the_sessions_token_and_deny_goes_back_with_access_denied() {
    let f = Flow::new().await;
    let mut form = f.authorize_query(f.ws.id);
    form.push(("decision", "allow".into()));
    let post = |form: Vec<(&'static str, String)>| {
        f.app.client.post(f.app.url("/oauth/authorize")).header(COOKIE, &f.browser.cookie).form(&form).send()
    };
    assert_eq!(post(form.clone()).await.expect("request").status(), 403);
    form.push(("csrf_token", "forged".into()));
    assert_eq!(post(form.clone()).await.expect("request").status(), 403);
    assert!(sql_bool(&f.app, "(SELECT count(*) FROM oauth_grants) = 0").await);
    let mut deny = f.authorize_query(f.ws.id);
    deny.push(("decision", "deny".into()));
    deny.push(("csrf_token", f.browser.csrf.clone()));
    let res = post(deny).await.expect("request");
    let back = query_of(res.headers().get(LOCATION).and_then(|v| v.to_str().ok()).unwrap_or(""));
    assert!(back.contains(&("error".into(), "access_denied".into())), "{back:?}");
    assert!(sql_bool(&f.app, "(SELECT count(*) FROM oauth_grants) = 0").await);
}

#[tokio::test]
async fn bad_input_gets_the_rfc_error_codes_and_never_a_500() {
    let f = Flow::new().await;
    let app = &f.app;
    let id = f.client_id.as_str();
    let long = "wmsr_".repeat(10);
    let cases: Vec<TokenCase> = vec![
        (vec![], 400, "invalid_request"),
        (vec![("grant_type", "password")], 400, "unsupported_grant_type"),
        (vec![("grant_type", "client_credentials"), ("client_id", id)], 400, "unsupported_grant_type"),
        (vec![("grant_type", "authorization_code")], 400, "invalid_request"),
        (vec![("grant_type", "authorization_code"), ("client_id", "nobody-at-all-123")], 401, "invalid_client"),
        // PostgreSQL cannot hold the NUL character, so it never reaches it (it used to be a 500).
        (vec![("grant_type", "authorization_code"), ("client_id", "\u{0}")], 400, "invalid_request"),
        (vec![("grant_type", "authorization_code"), ("client_id", id), ("code", "a\u{0}")], 400, "invalid_request"),
        (vec![("grant_type", "authorization_code"), ("client_id", id)], 400, "invalid_request"),
        (
            vec![
                ("grant_type", "authorization_code"),
                ("client_id", id),
                ("code", "made-up"),
                ("redirect_uri", REDIRECT),
                ("code_verifier", VERIFIER),
            ],
            400,
            "invalid_grant",
        ),
        (vec![("grant_type", "refresh_token"), ("client_id", id)], 400, "invalid_request"),
        (
            vec![("grant_type", "refresh_token"), ("client_id", id), ("refresh_token", "wmsr_garbage")],
            400,
            "invalid_grant",
        ),
        (vec![("grant_type", "refresh_token"), ("client_id", id), ("refresh_token", &long)], 400, "invalid_grant"),
        (vec![("grant_type", "refresh_token"), ("grant_type", "refresh_token")], 400, "invalid_request"),
        (
            vec![("grant_type", "authorization_code"), ("client_id", id), ("scope", "channels:write")],
            400,
            "invalid_scope",
        ),
    ];
    for (form, status, code) in cases {
        let (got, body) = token(app, &form).await;
        assert_eq!(got, status, "{form:?}: {body}");
        oauth_error(got, &body, status, code);
    }
    // Not a form.
    let res = app.client.post(app.url("/oauth/token")).json(&json!({"grant_type": "refresh_token"})).send().await;
    let res = res.expect("request");
    let (status, body) = (res.status().as_u16(), res.json::<Value>().await.expect("json"));
    oauth_error(status, &body, 400, "invalid_request");
    // Over 256 KiB: refused in the protocol's own form too.
    let big = [("grant_type", "refresh_token".to_owned()), ("refresh_token", "x".repeat(300 * 1024))];
    let res = app.client.post(app.url("/oauth/token")).form(&big).send().await.expect("request");
    let (status, body) = (res.status().as_u16(), res.json::<Value>().await.expect("json"));
    oauth_error(status, &body, 400, "invalid_request");
    let big = json!({"redirect_uris": ["https://a.example/cb"], "client_name": "x".repeat(300 * 1024)});
    let res = app.client.post(app.url("/oauth/register")).json(&big).send().await.expect("request");
    let (status, body) = (res.status().as_u16(), res.json::<Value>().await.expect("json"));
    oauth_error(status, &body, 400, "invalid_request");

    let registrations: Vec<(Value, &str)> = vec![
        (json!({}), "invalid_redirect_uri"),
        (json!({"redirect_uris": "https://a.example/cb"}), "invalid_redirect_uri"),
        (json!({"redirect_uris": ["http://a.example/cb"]}), "invalid_redirect_uri"),
        (json!({"redirect_uris": ["https://a.example/cb#x"]}), "invalid_redirect_uri"),
        (json!({"redirect_uris": ["https://a.example/cb\u{0}"]}), "invalid_redirect_uri"),
        (
            json!({"redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "private_key_jwt"}),
            "invalid_client_metadata",
        ),
        (json!({"redirect_uris": ["https://a.example/cb"], "client_name": "x".repeat(101)}), "invalid_client_metadata"),
        (json!({"redirect_uris": ["https://a.example/cb"], "grant_types": ["implicit"]}), "invalid_client_metadata"),
        (json!([1]), "invalid_client_metadata"),
    ];
    for (body, code) in registrations {
        let res = app.client.post(app.url("/oauth/register")).json(&body).send().await.expect("request");
        let status = res.status().as_u16();
        let answer: Value = res.json().await.expect("json");
        oauth_error(status, &answer, 400, code);
    }
    let res = app.client.post(app.url("/oauth/register")).body("not json").send().await.expect("request");
    let (status, body) = (res.status().as_u16(), res.json::<Value>().await.expect("json"));
    oauth_error(status, &body, 400, "invalid_client_metadata");
    assert!(sql_bool(app, "(SELECT count(*) FROM oauth_clients) = 1").await);

    // The authorization endpoint: pages, never a 500.
    let nul_client = format!("response_type=code&client_id={id}%00&redirect_uri=x");
    for query in
        ["", "client_id=", "client_id=%FF%FE", "response_type=code&client_id=x&redirect_uri=%00", "client_id=%00"]
            .into_iter()
            .chain([nul_client.as_str()])
    {
        let res = app.client.get(app.url(&format!("/oauth/authorize?{query}"))).send().await.expect("request");
        assert_eq!(res.status(), 400, "{query}");
    }
    let res = app.client.post(app.url("/oauth/authorize")).header(COOKIE, &f.browser.cookie).body("%%%").send().await;
    assert!(res.expect("request").status().is_client_error());
}

#[tokio::test]
async fn the_public_oauth_routes_answer_every_kind_of_caller_alike() {
    let f = Flow::new().await;
    let app = &f.app;
    let key = app.create_workspace(PlanTier::Advanced).await;
    let key = app.api_key(&key).await;
    let user = crate::credentials::admin_token(app, &f.ws).await;
    let (access, _) = f.tokens().await;
    let metadata = format!("/.well-known/oauth-protected-resource/workspaces/{}/co-admin/mcp", f.ws.id);
    for bearer in [None, Some(key.as_str()), Some(user.as_str()), Some(access.as_str())] {
        let with = |req: reqwest::RequestBuilder| match bearer {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        for path in ["/.well-known/oauth-authorization-server", metadata.as_str()] {
            let res = with(app.client.get(app.url(path))).send().await.expect("request");
            assert_eq!(res.status(), 200, "{path} with {bearer:?}");
        }
        let res = with(app.client.post(app.url("/oauth/register")))
            .json(&json!({"redirect_uris": [REDIRECT]}))
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), 201, "{bearer:?}");
        let res = with(app.client.post(app.url("/oauth/token"))).form(&[("grant_type", "password")]).send().await;
        assert_eq!(res.expect("request").status(), 400, "{bearer:?}");
        // The consent page reads only the session: a bearer credential is no sign-in.
        let res = with(app.client.get(app.url("/oauth/authorize")).query(&f.authorize_query(f.ws.id))).send().await;
        assert_eq!(res.expect("request").status(), 303, "{bearer:?}");
    }
    // With the session, whoever else is presented.
    let res = f.authorize_get(&f.authorize_query(f.ws.id)).await;
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn browser_clients_may_preflight_the_protocol_endpoints_and_other_methods_are_405() {
    let app = TestApp::spawn().await;
    for path in ["/oauth/token", "/oauth/register", "/.well-known/oauth-authorization-server"] {
        let res = app
            .client
            .request(reqwest::Method::OPTIONS, app.url(path))
            .header("origin", "http://localhost:6274")
            .header("access-control-request-method", "POST")
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), 204, "{path}");
        let allow = res.headers().get("access-control-allow-origin").and_then(|v| v.to_str().ok());
        assert_eq!(allow, Some("*"), "{path}");
        let res = app.client.delete(app.url(path)).send().await.expect("request");
        assert_eq!(res.status(), 405, "{path}");
    }
}

/// A client asking for a client secret (some MCP clients' default) is registered as a public
/// client: the answer says `none` and holds no secret (RFC 7591 lets the server replace a value).
#[tokio::test]
async fn a_client_asking_for_a_secret_is_registered_as_a_public_client() {
    let app = TestApp::spawn().await;
    for method in ["client_secret_post", "client_secret_basic"] {
        let body = json!({"redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": method});
        let res = app.client.post(app.url("/oauth/register")).json(&body).send().await.expect("request");
        assert_eq!(res.status(), 201, "{method}");
        let got: Value = res.json().await.expect("json");
        assert_eq!(got["token_endpoint_auth_method"], "none", "{method}");
        assert!(got.get("client_secret").is_none(), "no secret is issued: {got}");
    }
}
