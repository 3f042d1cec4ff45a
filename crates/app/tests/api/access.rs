//! The one access policy (`docs/contract.md`, "Access"): every route called by every kind of caller on
//! every plan gets the answer the policy table gives; an agent cannot make themselves admin, oust or
//! demote an admin, or take over a channel's credentials; key scopes; the published matrix cannot
//! drift.

use domain::access::{authorize, Action, Actor, Caller, Denied, Scope, ScopeSet, Surface};
use domain::users::{Role, UserId};
use domain::workspace::{PlanTier, WorkspaceId};
use reqwest::Method;
use serde_json::{json, Value};

use crate::credentials::{add_member, admin_token, sql_bool, token_for};
use crate::helpers::{problem, TestApp, TestWorkspace};
use crate::pages::{sign_in, Browser};
use adapters_http::access::{Access, RouteEntry};

mod members;

/// An id no row has, for paths that name a resource.
const NOWHERE: i64 = 987_654;

/// One kind of caller, with what it presents.
#[derive(Debug, Clone)]
enum Who {
    /// A login token of a member.
    Token { token: String, user: i64, role: Role },
    /// An API key with these scopes.
    Key { key: String, scopes: ScopeSet },
    /// The settings session of a member.
    Session { browser: Browser, user: i64, role: Role },
    /// An app's OAuth access token, granted by a member (docs/oauth.md).
    App { token: String, user: i64, role: Role },
}

impl Who {
    fn actor(&self) -> Actor {
        match self {
            Who::Token { user, role, .. } | Who::Session { user, role, .. } => {
                Actor::Member { user_id: UserId(*user), role: *role }
            }
            Who::Key { scopes, .. } => Actor::ApiKey { key_id: 1, scopes: *scopes },
            Who::App { user, role, .. } => {
                Actor::App { user_id: UserId(*user), role: *role, scopes: ScopeSet::of([Scope::AssistantRead]) }
            }
        }
    }

    fn label(&self) -> String {
        match self {
            Who::Token { role, .. } => format!("{} token", role.as_str()),
            Who::Key { scopes, .. } if scopes.is_full() => "full key".into(),
            Who::Key { scopes, .. } => format!("key {:?}", scopes.names()),
            Who::Session { role, .. } => format!("{} session", role.as_str()),
            Who::App { role, .. } => format!("{} app token", role.as_str()),
        }
    }
}

/// What the policy says the answer is.
#[derive(Debug, PartialEq, Eq)]
enum Expect {
    /// Past the policy: anything but 401 and 403 (the made-up ids are 404, empty bodies 422).
    Through,
    /// 403 with this code.
    Refused(&'static str),
    /// 401: this credential does not work on this surface at all.
    Unauthenticated,
    /// The settings pages send people without a session to sign in.
    SignIn,
}

fn surface(access: Access) -> Surface {
    match access {
        Access::Rest(_) => Surface::RestApi,
        Access::Assistant => Surface::Assistant,
        _ => Surface::Settings,
    }
}

fn code(d: Denied) -> &'static str {
    match d {
        Denied::PlanRequired { .. } => "plan_required",
        Denied::Forbidden(_) => "forbidden",
        Denied::InsufficientScope(_) => "insufficient_scope",
    }
}

/// The policy's answer for `who` calling `route` in a workspace on `plan`.
fn expected(route: &RouteEntry, who: &Who, plan: PlanTier) -> Option<Expect> {
    let action = route.access.action()?;
    let caller = Caller { workspace_id: WorkspaceId(1), plan, actor: who.actor(), surface: surface(route.access) };
    let verdict = authorize(&caller, action);
    Some(match (route.access, who) {
        (Access::Public, _) => return None,
        // Pages read only the session cookie; bearer credentials are not a sign-in there.
        (Access::Page(_), Who::Token { .. } | Who::Key { .. } | Who::App { .. }) => Expect::SignIn,
        // An app's token works on the assistant's endpoints only.
        (Access::Rest(_) | Access::Settings(_), Who::App { .. }) => Expect::Unauthenticated,
        // A feature below the plan: its page explains the plan, its actions refuse.
        (Access::Page(_), Who::Session { .. }) => match verdict {
            Err(Denied::PlanRequired { .. }) if route.method == "GET" => Expect::Through,
            Err(d) => Expect::Refused(code(d)),
            Ok(()) => Expect::Through,
        },
        // `/v1` reads only the Authorization header.
        (Access::Rest(_), Who::Session { .. }) => Expect::Unauthenticated,
        // The settings API is for members (docs/contract.md): keys are refused as such.
        (Access::Settings(_), Who::Key { .. }) => Expect::Refused("forbidden"),
        _ => match verdict {
            Ok(()) => Expect::Through,
            Err(d) => Expect::Refused(code(d)),
        },
    })
}

fn concrete(path: &str, ws: i64, who: &Who, method: &str) -> String {
    // A member may rename themselves: PATCH on their own id exercises that rule's route entry.
    let own = match who {
        Who::Token { user, .. } | Who::Session { user, .. } if method == "PATCH" => *user,
        _ => NOWHERE,
    };
    let mut out = String::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
        let value = match &rest[open + 1..close] {
            "workspace_id" => ws,
            "user_id" => own,
            _ => NOWHERE,
        };
        out.push_str(&value.to_string());
        rest = &rest[(close + 1).min(rest.len())..];
    }
    out.push_str(rest);
    out
}

async fn call(app: &TestApp, route: &RouteEntry, path: &str, who: &Who) -> reqwest::Response {
    let method = Method::from_bytes(route.method.as_bytes()).expect("method");
    let mut req = app.client.request(method.clone(), app.url(path));
    let is_page = matches!(route.access, Access::Page(_));
    req = match who {
        Who::Token { token, .. } | Who::App { token, .. } => req.bearer_auth(token),
        Who::Key { key, .. } => req.bearer_auth(key),
        Who::Session { browser, .. } => req.header("cookie", &browser.cookie).header("x-csrf-token", &browser.csrf),
    };
    if method != Method::GET {
        req = if is_page {
            let csrf = match who {
                Who::Session { browser, .. } => browser.csrf.clone(),
                _ => String::new(),
            };
            req.form(&[("csrf_token", csrf.as_str())])
        } else {
            req.json(&json!({}))
        };
    }
    req.send().await.expect("request")
}

async fn actors(app: &TestApp, ws: &TestWorkspace) -> Vec<Who> {
    let (agent_email, agent_password) = add_member(app, ws.id, "agent").await;
    let agent_id = user_id(app, &agent_email).await;
    let admin = Who::Token { token: admin_token(app, ws).await, user: ws.admin_id, role: Role::Admin };
    let agent = Who::Token {
        token: token_for(app, &agent_email, &agent_password, Some(ws.id)).await,
        user: agent_id,
        role: Role::Agent,
    };
    let mut out = vec![admin, agent];
    out.push(Who::Key { key: app.api_key(ws).await, scopes: ScopeSet::full() });
    for scope in Scope::ALL.iter().copied() {
        out.push(Who::Key { key: app.api_key_with_scopes(ws, &[scope.as_str()]).await, scopes: ScopeSet::of([scope]) });
    }
    out.push(Who::Session { browser: sign_in(app, ws).await, user: ws.admin_id, role: Role::Admin });
    let agent_ws =
        TestWorkspace { admin_email: agent_email, admin_password: agent_password, admin_id: agent_id, ..ws.clone() };
    let agent_browser = sign_in(app, &agent_ws).await;
    let agent_app = crate::oauth::app_token(app, ws.id, &agent_browser).await;
    out.push(Who::Session { browser: agent_browser, user: agent_id, role: Role::Agent });
    out.push(Who::App { token: agent_app, user: agent_id, role: Role::Agent });
    out
}

async fn user_id(app: &TestApp, email: &str) -> i64 {
    let sql = format!("SELECT json_build_object('id', id)::text AS j FROM users WHERE email = '{email}' AND $1 = 0");
    crate::assistant_helpers::sql_json(app, &sql, 0).await["id"].as_i64().expect("user id")
}

#[tokio::test]
async fn every_route_answers_every_caller_on_every_plan_as_the_policy_says() {
    let app = TestApp::spawn().await;
    let routes = adapters_http::access::registered();
    assert!(routes.len() > 40, "the server registered its routes ({})", routes.len());
    let mut failures = Vec::new();
    let mut checked = 0;
    for plan in PlanTier::ALL {
        let ws = app.create_workspace(plan).await;
        let callers = actors(&app, &ws).await;
        for route in &routes {
            for who in &callers {
                // One key per scope covers "the needed scope" and "an unrelated scope" for every
                // route; keys on pages and the settings API are one case each.
                let Some(expect) = expected(route, who, plan) else { continue };
                let path = concrete(&route.path, ws.id, who, route.method);
                let res = call(&app, route, &path, who).await;
                let status = res.status().as_u16();
                let location = res.headers().get("location").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
                let body: Value = res.json().await.unwrap_or(Value::Null);
                let ok = match &expect {
                    Expect::Through => status != 401 && status != 403 && status < 500,
                    Expect::Refused(code) if matches!(route.access, Access::Page(_)) => {
                        status == 403 && !code.is_empty()
                    }
                    Expect::Refused(code) => status == 403 && body["code"] == *code,
                    Expect::Unauthenticated => status == 401,
                    Expect::SignIn => status == 303 && location.starts_with("/login"),
                };
                checked += 1;
                if !ok {
                    failures.push(format!(
                        "{plan} {} {} as {}: expected {expect:?}, got {status} {}",
                        route.method,
                        route.path,
                        who.label(),
                        body["code"]
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} calls disagree with the policy:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[tokio::test]
async fn every_protected_route_refuses_callers_without_credentials() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    for route in adapters_http::access::registered() {
        if route.access == Access::Public {
            continue;
        }
        let path = concrete(&route.path, ws.id, &Who::Key { key: String::new(), scopes: ScopeSet::empty() }, "");
        let method = Method::from_bytes(route.method.as_bytes()).expect("method");
        let res = app.client.request(method, app.url(&path)).send().await.expect("request");
        let status = res.status().as_u16();
        match route.access {
            Access::Page(_) if route.method == "GET" => assert_eq!(status, 303, "{} {}", route.method, route.path),
            // A form without the session's token is refused before anything else.
            Access::Page(_) => assert!(status == 303 || status == 403, "{} {}: {status}", route.method, route.path),
            _ => assert_eq!(status, 401, "{} {}", route.method, route.path),
        }
    }
}

#[tokio::test]
async fn the_agent_escalation_is_refused_at_every_step_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let (email, password) = add_member(&app, ws.id, "agent").await;
    let agent = token_for(&app, &email, &password, Some(ws.id)).await;
    let me = user_id(&app, &email).await;

    let promote = app.authed(Method::PATCH, &format!("/v1/users/{me}"), &agent).json(&json!({"role": "admin"}));
    problem(promote.send().await.expect("request"), 403, "forbidden").await;
    let oust = app.authed(Method::DELETE, &format!("/v1/users/{}", ws.admin_id), &agent);
    problem(oust.send().await.expect("request"), 403, "forbidden").await;
    let demote =
        app.authed(Method::PATCH, &format!("/v1/users/{}", ws.admin_id), &agent).json(&json!({"role": "agent"}));
    problem(demote.send().await.expect("request"), 403, "forbidden").await;
    let channel = json!({"channel_type": "whatsapp", "display_name": "Mine", "identifier": "+15550001111"});
    problem(app.post_json("/v1/channels", &agent, &channel).await, 403, "forbidden").await;
    let key = app.api_key(&ws).await;
    let id = app.channel(&key, "whatsapp", "+15550002222", "active").await;
    let steal = app
        .authed(Method::PATCH, &format!("/v1/channels/{id}"), &agent)
        .json(&json!({"credentials": {"phone_number_id": "1", "access_token": "attacker-token"}}));
    problem(steal.send().await.expect("request"), 403, "forbidden").await;

    assert!(sql_bool(&app, &format!("(SELECT role FROM workspace_members WHERE user_id = {me}) = 'agent'")).await);
    assert!(
        sql_bool(
            &app,
            &format!("EXISTS (SELECT 1 FROM workspace_members WHERE user_id = {} AND role = 'admin')", ws.admin_id)
        )
        .await
    );
    assert!(sql_bool(&app, "(SELECT count(*) FROM channels) = 1").await);
    assert!(sql_bool(&app, &format!("(SELECT credentials_encrypted IS NULL FROM channels WHERE id = {id})")).await);
}

#[tokio::test]
async fn keys_are_created_with_scopes_listed_and_held_to_them() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let keys = format!("/api/workspaces/{}/api-keys", ws.id);
    let res =
        app.post_json(&keys, &admin, &json!({"name": "reader", "scopes": ["messages:read", "channels:write"]})).await;
    assert_eq!(res.status(), 201);
    let created: Value = res.json().await.expect("json");
    assert_eq!(created["scopes"], json!(["messages:read", "channels:write"]));
    let key = created["key"].as_str().expect("key").to_owned();
    let full: Value = app.post_json(&keys, &admin, &json!({"name": "full"})).await.json().await.expect("json");
    assert_eq!(full["scopes"].as_array().map(Vec::len), Some(Scope::ALL.len()));
    let (_, listed) = app.get_json(&keys, &admin).await;
    assert_eq!(listed["data"][1]["scopes"], json!(["messages:read", "channels:write"]));

    // channels:write implies channels:read; messages:write is not granted.
    assert_eq!(app.get_json("/v1/channels", &key).await.0, 200);
    let send = json!({"channel_id": 1, "content": "hi", "to": "+15550003333"});
    let refused = app.post_json("/v1/messages", &key, &send).await;
    let header = refused.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert_eq!(header, r#"Bearer realm="wms", error="insufficient_scope", scope="messages:write""#);
    problem(refused, 403, "insufficient_scope").await;
    problem(app.get("/v1/users").await, 401, "unauthenticated").await;
    problem(app.authed(Method::GET, "/v1/users", &key).send().await.expect("request"), 403, "insufficient_scope").await;
}

#[tokio::test]
async fn bad_scopes_are_named_and_create_nothing() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let admin = admin_token(&app, &ws).await;
    let keys = format!("/api/workspaces/{}/api-keys", ws.id);
    for bad in [json!(["messages:delete"]), json!([]), json!("messages:read"), json!([1])] {
        let res = app.post_json(&keys, &admin, &json!({"name": "x", "scopes": bad})).await;
        let status = res.status().as_u16();
        let body: Value = res.json().await.expect("json");
        assert_eq!(status, 422, "{bad}: {body}");
        assert!(
            body["errors"]
                .as_array()
                .is_some_and(|e| e.iter().any(|f| f["field"].as_str().is_some_and(|n| n.starts_with("scopes")))),
            "{bad}: {body}"
        );
    }
    assert!(sql_bool(&app, "(SELECT count(*) FROM api_keys) = 0").await);
}

#[tokio::test]
async fn the_published_access_document_is_the_policy() {
    let _app = TestApp::spawn().await;
    let generated = adapters_http::access::document();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/access.md");
    if std::env::var_os("WMS_UPDATE_DOCS").is_some() {
        std::fs::write(path, &generated).expect("write docs/access.md");
    }
    let published = std::fs::read_to_string(path).unwrap_or_default();
    assert!(published == generated, "docs/access.md is stale: run WMS_UPDATE_DOCS=1 cargo nextest run -p app --test api the_published_access_document");
    for action in Action::ALL {
        assert!(published.contains(&format!("`{action}`")), "{action} is missing");
    }
}

#[tokio::test]
async fn the_assistant_shows_agents_webhook_urls_without_their_secrets() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let key = app.api_key(&ws).await;
    let created = app
        .post_json(
            "/v1/webhooks",
            &key,
            &json!({"url": "https://hooks.example.com/in?token=s3cret", "events": ["message.created"]}),
        )
        .await;
    assert_eq!(created.status(), 201);
    let (email, password) = add_member(&app, ws.id, "agent").await;
    let agent = token_for(&app, &email, &password, Some(ws.id)).await;
    let admin = admin_token(&app, &ws).await;
    let narrow = app.api_key_with_scopes(&ws, &["assistant:read"]).await;
    let path = format!("/workspaces/{}/co-admin/tools/execute", ws.id);
    let body = json!({"tool": "list_webhooks", "arguments": {}});
    let url_for = |token: String| {
        let req = app.client.post(app.url(&path)).bearer_auth(token).json(&body);
        async move {
            let v: Value = req.send().await.expect("request").json().await.expect("json");
            v["result"]["webhooks"][0]["url"].as_str().unwrap_or_default().to_owned()
        }
    };
    assert_eq!(url_for(admin).await, "https://hooks.example.com/in?token=s3cret");
    assert_eq!(url_for(agent).await, "https://hooks.example.com/in");
    assert_eq!(url_for(narrow).await, "https://hooks.example.com/in");
}

/// A destination's static header values are often the receiver's credential: callers who may
/// only read webhooks get the names with empty values; those who manage destinations (and set
/// the values) see them, on every surface.
#[tokio::test]
async fn webhook_header_values_are_shown_only_to_callers_who_may_manage_webhooks() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let full = app.api_key(&ws).await;
    let body = json!({"url": "https://hooks.example.com/in", "events": ["message.created"],
                      "headers": {"Authorization": "Bearer rcv_s3cret", "X-Tenant": "acme"}});
    let created = app.post_json("/v1/webhooks", &full, &body).await;
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await.expect("json");
    let id = created["id"].as_i64().expect("id");
    assert_eq!(created["headers"]["Authorization"], "Bearer rcv_s3cret", "the creator sees what it set");
    let values = json!({"Authorization": "Bearer rcv_s3cret", "X-Tenant": "acme"});
    let masked = json!({"Authorization": "", "X-Tenant": ""});

    let reader = app.api_key_with_scopes(&ws, &["webhooks:read"]).await;
    let writer = app.api_key_with_scopes(&ws, &["webhooks:write"]).await;
    let admin = admin_token(&app, &ws).await;
    let settings = format!("/api/workspaces/{}/webhooks", ws.id);
    for (who, token, base, expected) in [
        ("a key with webhooks:read only", &reader, "/v1/webhooks", &masked),
        ("a key with webhooks:write", &writer, "/v1/webhooks", &values),
        ("a key with every scope", &full, "/v1/webhooks", &values),
        ("an admin on /v1", &admin, "/v1/webhooks", &values),
        ("an admin on the settings API", &admin, settings.as_str(), &values),
    ] {
        let (status, one) = app.get_json(&format!("{base}/{id}"), token).await;
        assert_eq!((status, &one["headers"]), (200, expected), "{who}: get");
        let (status, list) = app.get_json(base, token).await;
        assert_eq!((status, &list["data"][0]["headers"]), (200, expected), "{who}: list");
    }
    let (_, one) = app.get_json(&format!("/v1/webhooks/{id}"), &reader).await;
    assert!(!one.to_string().contains("rcv_s3cret"), "{one}");

    // An agent reads no destination at all, on either surface.
    let (email, password) = add_member(&app, ws.id, "agent").await;
    let agent = token_for(&app, &email, &password, Some(ws.id)).await;
    assert_eq!(app.get_json(&format!("/v1/webhooks/{id}"), &agent).await.0, 403);
    assert_eq!(app.get_json(&format!("{settings}/{id}"), &agent).await.0, 403);

    // The settings page (admins) shows the values in the edit form.
    let browser = sign_in(&app, &ws).await;
    let page = browser.get(&app, &format!("/settings/integrations/webhooks/{id}")).await;
    assert_eq!(page.status(), 200);
    assert!(page.text().await.expect("html").contains("Authorization: Bearer rcv_s3cret"));

    // The assistant's list_webhooks shows no headers to anyone.
    let narrow = app.api_key_with_scopes(&ws, &["assistant:read", "webhooks:read"]).await;
    let path = format!("/workspaces/{}/co-admin/tools/execute", ws.id);
    for token in [narrow, admin] {
        let res = app
            .client
            .post(app.url(&path))
            .bearer_auth(token)
            .json(&json!({"tool": "list_webhooks", "arguments": {}}))
            .send()
            .await
            .expect("request");
        let v: Value = res.json().await.expect("json");
        assert_eq!(v["result"]["webhooks"][0]["id"], id, "{v}");
        assert!(
            !v.to_string().contains("rcv_s3cret") && !v.to_string().to_ascii_lowercase().contains("x-tenant"),
            "{v}"
        );
    }
}
