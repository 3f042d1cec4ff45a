//! Unit tests of the authorization server's service, on mocks.

use std::sync::Arc;

use time::macros::datetime;

use super::*;
use crate::common::ports::{MockClock, MockRandomSource};
use crate::oauth::ports::MockOAuthStore;

const ISSUER: &str = "https://wms.example.com";
/// An id of the shape registration issues (base64url of 18 bytes).
const CLIENT_ID: &str = "abcdefghijklmnopqrstuvwx";

fn client() -> Client {
    Client {
        id: 1,
        client_id: CLIENT_ID.into(),
        client_name: "Claude".into(),
        redirect_uris: vec!["http://127.0.0.1:9/cb".into()],
        created_at: datetime!(2026-11-26 12:00 UTC),
    }
}

fn service(store: MockOAuthStore) -> OAuthService {
    let mut clock = MockClock::new();
    clock.expect_now().returning(|| datetime!(2026-11-26 12:00 UTC));
    let mut random = MockRandomSource::new();
    random.expect_fill().returning(|b| b.fill(7));
    OAuthService { store: Arc::new(store), clock: Arc::new(clock), random: Arc::new(random) }
}

fn request() -> AuthorizationRequest {
    AuthorizationRequest {
        response_type: Some("code".into()),
        client_id: Some(CLIENT_ID.into()),
        redirect_uri: Some("http://127.0.0.1:9/cb".into()),
        code_challenge: Some("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into()),
        code_challenge_method: Some("S256".into()),
        scope: Some("assistant:read".into()),
        state: Some("xyz".into()),
        resource: Some(format!("{ISSUER}/workspaces/3/co-admin/mcp")),
    }
}

fn known_client() -> MockOAuthStore {
    let mut store = MockOAuthStore::new();
    store.expect_client().returning(|id| Ok((id == CLIENT_ID).then(client)));
    store
}

#[tokio::test]
async fn a_valid_request_names_the_workspace_of_its_resource() {
    let v = service(known_client()).check(&request(), ISSUER).await.expect("valid");
    assert_eq!(v.workspace_id, WorkspaceId(3));
    let back = v.redirect_with(&[("code", "c0de")]);
    assert_eq!(back, "http://127.0.0.1:9/cb?code=c0de&state=xyz");
}

#[tokio::test]
async fn an_unknown_client_or_redirect_uri_is_never_redirected_to() {
    let s = service(known_client());
    for req in [
        AuthorizationRequest { client_id: Some("nope".into()), ..request() },
        AuthorizationRequest { client_id: None, ..request() },
        AuthorizationRequest { redirect_uri: Some("http://127.0.0.1:9/evil".into()), ..request() },
    ] {
        assert!(matches!(s.check(&req, ISSUER).await, Err(AuthorizeError::NoRedirect(_))), "{req:?}");
    }
}

#[tokio::test]
async fn other_mistakes_go_back_to_the_client_with_their_code() {
    let s = service(known_client());
    let cases = [
        (AuthorizationRequest { code_challenge: None, ..request() }, "invalid_request"),
        (AuthorizationRequest { code_challenge_method: Some("plain".into()), ..request() }, "invalid_request"),
        (AuthorizationRequest { response_type: Some("token".into()), ..request() }, "unsupported_response_type"),
        (AuthorizationRequest { scope: Some("channels:write".into()), ..request() }, "invalid_scope"),
        (AuthorizationRequest { resource: None, ..request() }, "invalid_target"),
        (AuthorizationRequest { resource: Some("https://evil.example/mcp".into()), ..request() }, "invalid_target"),
    ];
    for (req, code) in cases {
        match s.check(&req, ISSUER).await {
            Err(AuthorizeError::Redirect { location, refusal }) => {
                assert_eq!(refusal.code.as_str(), code);
                assert!(location.starts_with("http://127.0.0.1:9/cb?error="), "{location}");
                assert!(location.ends_with("&state=xyz"), "{location}");
            }
            other => panic!("{req:?}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn the_token_endpoint_names_what_is_missing_before_any_lookup() {
    let s = service(MockOAuthStore::new());
    let ctx = AuditContext::system();
    let code = |r: Result<TokenGrant, TokenError>| match r {
        Err(TokenError::Refused(r)) => r.code.as_str(),
        other => panic!("{other:?}"),
    };
    assert_eq!(code(s.token(&TokenRequest::default(), &ctx).await), "invalid_request");
    let password = TokenRequest { grant_type: Some("password".into()), ..TokenRequest::default() };
    assert_eq!(code(s.token(&password, &ctx).await), "unsupported_grant_type");
    let no_client = TokenRequest { grant_type: Some("authorization_code".into()), ..TokenRequest::default() };
    assert_eq!(code(s.token(&no_client, &ctx).await), "invalid_request");
}

#[tokio::test]
async fn an_unknown_client_is_invalid_client_and_a_bad_verifier_invalid_request() {
    let s = service(known_client());
    let ctx = AuditContext::system();
    let base = TokenRequest {
        grant_type: Some("authorization_code".into()),
        client_id: Some("nope".into()),
        code: Some("c".into()),
        redirect_uri: Some("http://127.0.0.1:9/cb".into()),
        code_verifier: Some("short".into()),
        ..TokenRequest::default()
    };
    let code = |r: Result<TokenGrant, TokenError>| match r {
        Err(TokenError::Refused(r)) => r.code.as_str(),
        other => panic!("{other:?}"),
    };
    assert_eq!(code(s.token(&base, &ctx).await), "invalid_client");
    // Not of the issued shape: never looked up (PostgreSQL cannot compare a NUL).
    let mut strange = CLIENT_ID.to_owned();
    strange.push('\0');
    let nul = TokenRequest { client_id: Some(strange), ..base.clone() };
    assert_eq!(code(s.token(&nul, &ctx).await), "invalid_client");
    let known = TokenRequest { client_id: Some(CLIENT_ID.into()), ..base };
    assert_eq!(code(s.token(&known, &ctx).await), "invalid_request");
}
