//! Unit tests of the grant's state machine.

use time::macros::datetime;
use time::Duration;

use super::*;

const NOW: OffsetDateTime = datetime!(2026-11-26 12:00 UTC);
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const RESOURCE: &str = "https://wms.example.com/workspaces/3/co-admin/mcp";

fn code() -> CodeFacts {
    CodeFacts {
        grant_id: 5,
        workspace_id: WorkspaceId(3),
        client_id: "client".into(),
        redirect_uri: "http://127.0.0.1:9/cb".into(),
        code_challenge: CHALLENGE.into(),
        resource: RESOURCE.into(),
        expires_at: NOW + Duration::seconds(30),
        used_at: None,
        grant_revoked: false,
    }
}

fn exchange() -> CodeExchange {
    CodeExchange {
        client_id: "client".into(),
        redirect_uri: "http://127.0.0.1:9/cb".into(),
        code_verifier: VERIFIER.into(),
        resource: Some(RESOURCE.into()),
    }
}

fn refused_with(e: Exchange) -> OAuthErrorCode {
    match e {
        Exchange::Refuse(r) => r.code,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_fresh_code_with_its_verifier_issues_tokens() {
    assert_eq!(redeem_code(&code(), &exchange(), NOW, &AuditContext::system()), Exchange::Issue);
    let without_resource = CodeExchange { resource: None, ..exchange() };
    assert_eq!(redeem_code(&code(), &without_resource, NOW, &AuditContext::system()), Exchange::Issue);
}

#[test]
fn a_code_is_refused_when_anything_differs() {
    let ctx = AuditContext::system();
    let wrong_verifier = CodeExchange { code_verifier: "x".repeat(43), ..exchange() };
    assert_eq!(refused_with(redeem_code(&code(), &wrong_verifier, NOW, &ctx)), OAuthErrorCode::InvalidGrant);
    let other_client = CodeExchange { client_id: "other".into(), ..exchange() };
    assert_eq!(refused_with(redeem_code(&code(), &other_client, NOW, &ctx)), OAuthErrorCode::InvalidGrant);
    let other_redirect = CodeExchange { redirect_uri: "http://127.0.0.1:9/other".into(), ..exchange() };
    assert_eq!(refused_with(redeem_code(&code(), &other_redirect, NOW, &ctx)), OAuthErrorCode::InvalidGrant);
    let other_resource = CodeExchange { resource: Some(RESOURCE.replace("/3/", "/4/")), ..exchange() };
    assert_eq!(refused_with(redeem_code(&code(), &other_resource, NOW, &ctx)), OAuthErrorCode::InvalidTarget);
    let later = NOW + Duration::seconds(31);
    assert_eq!(refused_with(redeem_code(&code(), &exchange(), later, &ctx)), OAuthErrorCode::InvalidGrant);
}

#[test]
fn a_code_used_twice_revokes_the_grant_once() {
    let used = CodeFacts { used_at: Some(NOW), ..code() };
    match redeem_code(&used, &exchange(), NOW, &AuditContext::system()) {
        Exchange::RevokeGrant(r, entry) => {
            assert_eq!(r.code, OAuthErrorCode::InvalidGrant);
            assert_eq!((entry.action, entry.workspace_id), (crate::audit::AuditAction::OAuthRevoked, WorkspaceId(3)));
        }
        other => panic!("{other:?}"),
    }
    let revoked = CodeFacts { grant_revoked: true, ..used };
    assert_eq!(
        refused_with(redeem_code(&revoked, &exchange(), NOW, &AuditContext::system())),
        OAuthErrorCode::InvalidGrant
    );
}

fn refresh() -> RefreshFacts {
    RefreshFacts {
        grant_id: 5,
        workspace_id: WorkspaceId(3),
        client_id: "client".into(),
        client_name: "Claude".into(),
        resource: RESOURCE.into(),
        expires_at: NOW + Duration::days(1),
        used_at: None,
        grant_revoked: false,
        standing: Standing::ACTIVE,
    }
}

#[test]
fn a_refresh_token_rotates_once_and_its_reuse_revokes_the_grant() {
    let ctx = AuditContext::system();
    let req = RefreshExchange { client_id: "client".into(), resource: None };
    assert_eq!(rotate_refresh(&refresh(), &req, NOW, &ctx), Exchange::Issue);
    let used = RefreshFacts { used_at: Some(NOW), ..refresh() };
    assert!(matches!(rotate_refresh(&used, &req, NOW, &ctx), Exchange::RevokeGrant(..)));
    let revoked = RefreshFacts { grant_revoked: true, ..used };
    assert_eq!(refused_with(rotate_refresh(&revoked, &req, NOW, &ctx)), OAuthErrorCode::InvalidGrant);
    let other = RefreshExchange { client_id: "other".into(), resource: None };
    assert_eq!(refused_with(rotate_refresh(&refresh(), &other, NOW, &ctx)), OAuthErrorCode::InvalidGrant);
    let gone = RefreshFacts { standing: Standing { member_active: false, workspace_active: true }, ..refresh() };
    assert_eq!(refused_with(rotate_refresh(&gone, &req, NOW, &ctx)), OAuthErrorCode::InvalidGrant);
    let expired = RefreshFacts { expires_at: NOW, ..refresh() };
    assert_eq!(refused_with(rotate_refresh(&expired, &req, NOW, &ctx)), OAuthErrorCode::InvalidGrant);
}

fn access() -> AccessFacts {
    AccessFacts {
        grant_id: 5,
        workspace_id: WorkspaceId(3),
        plan: PlanTier::Free,
        user_id: UserId(8),
        role: Role::Agent,
        expires_at: NOW + Duration::minutes(5),
        grant_revoked: false,
        standing: Standing::ACTIVE,
    }
}

#[test]
fn an_access_token_acts_as_its_member_in_its_workspace_only() {
    let caller = admit_access(Some(&access()), WorkspaceId(3), NOW).expect("admitted");
    assert_eq!(caller.member(), Some((UserId(8), Role::Agent)));
    assert_eq!(caller.surface, Surface::Assistant);
    assert_eq!(admit_access(Some(&access()), WorkspaceId(4), NOW), Err(AccessRefusal::OtherWorkspace));
    assert_eq!(admit_access(None, WorkspaceId(3), NOW), Err(AccessRefusal::Unknown));
    let revoked = AccessFacts { grant_revoked: true, ..access() };
    assert_eq!(admit_access(Some(&revoked), WorkspaceId(3), NOW), Err(AccessRefusal::Revoked));
    assert_eq!(admit_access(Some(&access()), WorkspaceId(3), NOW + Duration::hours(1)), Err(AccessRefusal::Expired));
    let gone = AccessFacts { standing: Standing { member_active: false, workspace_active: true }, ..access() };
    assert_eq!(admit_access(Some(&gone), WorkspaceId(3), NOW), Err(AccessRefusal::MemberInactive));
}
