//! The whole OAuth flow as an MCP client runs it: the official MCP Python SDK (`mcp`) with no
//! token discovers wms from the MCP endpoint's 401, registers, sends the member to the consent
//! page in headless Chromium (Playwright), gets its tokens and lists the tools
//! (`crates/app/tests/py/mcp_oauth_flow.py`); then the member revokes it on the connected apps
//! page in the same browser.

use std::path::PathBuf;

use serde_json::Value;

use crate::credentials::sql_bool;
use crate::helpers::TestApp;
use domain::workspace::PlanTier;

fn python() -> PathBuf {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv-tests/bin/python");
    std::env::var_os("WMS_TEST_PYTHON").map_or(venv, PathBuf::from)
}

/// Runs the MCP client's whole flow in Chromium against `app` for `ws`, its redirect URI on
/// `callback_host`; the script's report.
async fn mcp_flow(app: &TestApp, ws: &crate::helpers::TestWorkspace, callback_host: &str) -> (String, Value) {
    assert!(std::path::Path::new("/usr/bin/chromium").exists(), "this test needs Chromium (scripts/browser-deps)");
    let url = app.url(&format!("/workspaces/{}/co-admin/mcp", ws.id));
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/py/mcp_oauth_flow.py");
    let mut cmd = tokio::process::Command::new(python());
    cmd.arg(script).arg(&url).arg(&ws.admin_email).arg(&ws.admin_password).kill_on_drop(true);
    cmd.env("WMS_CALLBACK_HOST", callback_host);
    let out = tokio::time::timeout(std::time::Duration::from_secs(180), cmd.output())
        .await
        .expect("the OAuth flow took over 3 minutes")
        .expect("run python");
    assert!(
        out.status.success(),
        "python failed\n--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (url, serde_json::from_slice(&out.stdout).expect("report json"))
}

/// A native app's IPv6 loopback redirect URI (`http://[::1]:PORT/callback`): CSP cannot name an
/// IPv6 origin, so the consent page's `form-action` allowed none and Chromium blocked the redirect
/// that carries the code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_with_an_ipv6_loopback_redirect_gets_its_code() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Free).await;
    let (_, report) = mcp_flow(&app, &ws, "::1").await;
    assert_eq!(report["csp_violations"], serde_json::json!([]), "{report}");
    assert!(report["access_token"].as_str().unwrap_or_default().starts_with("wmso_"), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_signs_in_through_the_consent_page_and_lists_the_tools() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Free).await;
    let (url, report) = mcp_flow(&app, &ws, "127.0.0.1").await;

    // Discovery led to our authorization endpoint with PKCE S256 and the resource.
    let auth_url = reqwest::Url::parse(report["authorization_url"].as_str().unwrap_or_default()).expect("url");
    assert_eq!(auth_url.path(), "/oauth/authorize");
    let param = |name: &str| auth_url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
    assert_eq!(param("code_challenge_method").as_deref(), Some("S256"));
    assert_eq!(param("resource").as_deref(), Some(url.as_str()));
    assert!(report["sign_in_url"].as_str().unwrap_or_default().contains("/login?next="), "{report}");

    // The consent page showed the client, the workspace and the scope; its CSP let the form go on.
    assert_eq!(report["consent"]["client"], "Playwright MCP client");
    assert!(report["consent"]["workspace"].as_str().unwrap_or_default().starts_with("Workspace "), "{report}");
    assert_eq!(report["consent"]["scope"], "assistant:read");
    assert_eq!(report["csp_violations"], serde_json::json!([]));

    // The tools are the manifest's.
    let names: Vec<&str> = domain::assistant::TOOLS.iter().map(|t| t.name).collect();
    let mut expected: Vec<&str> = names.clone();
    expected.sort_unstable();
    assert_eq!(report["tools"], serde_json::json!(expected));

    let access = report["access_token"].as_str().unwrap_or_default();
    let refresh = report["refresh_token"].as_str().unwrap_or_default();
    assert!(access.starts_with("wmso_") && refresh.starts_with("wmsr_"), "{report}");
    assert_eq!(report["scope"], "assistant:read");
    assert!(sql_bool(&app, &format!("EXISTS (SELECT 1 FROM oauth_tokens WHERE kind = 'access' AND token_digest = sha256(convert_to('{access}', 'UTF8')))")).await);
    assert!(sql_bool(&app, "(SELECT count(*) FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id WHERE c.client_name = 'Playwright MCP client') = 1").await);

    // Listed on the connected apps page, revoked there, then refused.
    let row = report["connected_apps"].as_str().unwrap_or_default();
    assert!(row.contains("Playwright MCP client") && row.contains("assistant:read"), "{row}");
    assert_eq!(report["after_revoke"], serde_json::json!([401, "token_revoked"]));
    assert!(sql_bool(&app, "(SELECT count(*) FROM oauth_grants WHERE revoked_at IS NOT NULL) = 1").await);
    assert!(
        sql_bool(&app, "EXISTS (SELECT 1 FROM audit_events WHERE action = 'oauth.revoked' AND actor_type = 'user')")
            .await
    );
}
