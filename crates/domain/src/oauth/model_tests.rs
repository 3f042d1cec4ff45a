//! Unit tests of the protocol values.

use serde_json::json;

use super::*;

#[test]
fn redirect_uris_are_https_or_loopback_http() {
    for ok in [
        "https://claude.ai/api/mcp/auth_callback",
        "http://127.0.0.1:33418/callback",
        "http://localhost:6274/oauth/callback",
        "http://[::1]:8080/cb?x=1",
    ] {
        assert_eq!(check_redirect_uri(ok), Ok(()), "{ok}");
    }
    for bad in [
        "http://evil.example/cb",
        "https://app.example/cb#frag",
        "cursor://anysphere/callback",
        "javascript:alert(1)",
        "/relative",
        "https://user:pw@app.example/cb",
        "",
    ] {
        assert!(check_redirect_uri(bad).is_err(), "{bad}");
    }
}

#[test]
fn client_metadata_is_read_and_refused_with_the_rfc_codes() {
    let m = ClientMetadata::from_json(&json!({
        "client_name": "Claude", "redirect_uris": ["https://claude.ai/cb", "https://claude.ai/cb"],
        "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"], "scope": "assistant:read"
    }))
    .expect("valid");
    assert_eq!((m.client_name.as_str(), m.redirect_uris.len()), ("Claude", 1));
    assert_eq!(
        ClientMetadata::from_json(&json!({"redirect_uris": ["http://127.0.0.1/cb"]})).expect("ok").client_name,
        UNNAMED_CLIENT
    );
    let code = |body| ClientMetadata::from_json(&body).expect_err("refused").code;
    assert_eq!(code(json!({"client_name": "x"})), OAuthErrorCode::InvalidRedirectUri);
    assert_eq!(code(json!({"redirect_uris": []})), OAuthErrorCode::InvalidRedirectUri);
    assert_eq!(code(json!({"redirect_uris": ["http://evil.example/cb"]})), OAuthErrorCode::InvalidRedirectUri);
    assert_eq!(code(json!({"redirect_uris": [1]})), OAuthErrorCode::InvalidRedirectUri);
    let uri = json!(["https://a.example/cb"]);
    assert_eq!(
        code(json!({"redirect_uris": uri, "token_endpoint_auth_method": "private_key_jwt"})),
        OAuthErrorCode::InvalidClientMetadata
    );
    // Asking for a client secret gets a public registration (the answer says `none`).
    for method in ["client_secret_post", "client_secret_basic"] {
        assert!(ClientMetadata::from_json(&json!({"redirect_uris": uri, "token_endpoint_auth_method": method})).is_ok());
    }
    assert_eq!(code(json!({"redirect_uris": uri, "grant_types": ["password"]})), OAuthErrorCode::InvalidClientMetadata);
    assert_eq!(code(json!({"redirect_uris": uri, "client_name": ""})), OAuthErrorCode::InvalidClientMetadata);
    assert_eq!(code(json!({"redirect_uris": uri, "scope": "channels:write"})), OAuthErrorCode::InvalidClientMetadata);
    assert_eq!(code(json!([1, 2])), OAuthErrorCode::InvalidClientMetadata);
}

#[test]
fn the_resource_names_one_workspace_mcp_endpoint() {
    let base = "https://wms.example.com";
    assert_eq!(mcp_resource(base, WorkspaceId(7)), "https://wms.example.com/workspaces/7/co-admin/mcp");
    assert_eq!(resource_workspace(base, "https://wms.example.com/workspaces/7/co-admin/mcp"), Some(WorkspaceId(7)));
    assert_eq!(
        resource_workspace("https://wms.example.com/", "https://wms.example.com/workspaces/7/co-admin/mcp/"),
        Some(WorkspaceId(7))
    );
    for bad in [
        "https://evil.example/workspaces/7/co-admin/mcp",
        "https://wms.example.com/workspaces/x/co-admin/mcp",
        "https://wms.example.com/workspaces/0/co-admin/mcp",
        "https://wms.example.com/workspaces/7/co-admin/tools/execute",
        "https://wms.example.com/workspaces/-7/co-admin/mcp",
        "https://wms.example.com.evil/workspaces/7/co-admin/mcp",
    ] {
        assert_eq!(resource_workspace(base, bad), None, "{bad}");
    }
}

#[test]
fn scopes_and_pkce() {
    assert!(scope_is_granted(None));
    assert!(scope_is_granted(Some("assistant:read")));
    assert!(!scope_is_granted(Some("")));
    assert!(!scope_is_granted(Some("assistant:read channels:write")));
    // RFC 7636 appendix B.
    let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
    assert!(is_s256_challenge(challenge));
    assert!(pkce_matches(challenge, verifier));
    assert!(!pkce_matches(challenge, &verifier.replace('d', "e")));
    assert!(!pkce_matches(challenge, "short"));
    assert!(!is_code_verifier(&"a".repeat(129)));
    assert!(!is_code_verifier(&format!("{}!", "a".repeat(43))));
}
