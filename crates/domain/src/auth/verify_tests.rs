//! Unit tests of request authentication, on mocks.

use super::*;
use crate::auth::{MockCredentialStore, MockSessionLookup, NewToken};
use crate::common::ports::MockRandomSource;
use crate::rate_limit::RateLimitPolicy;
use crate::users::{Role, UserId};

fn token(kind: TokenKind) -> String {
    let mut r = MockRandomSource::new();
    r.expect_fill().returning(|b| b.fill(0x33));
    NewToken::generate(kind, &r).secret
}

fn header(kind: TokenKind) -> Vec<u8> {
    format!("Bearer {}", token(kind)).into_bytes()
}

fn key_identity(plan: PlanTier) -> Identity {
    Identity {
        workspace_id: WorkspaceId(1),
        plan,
        owner: CredentialOwner::ApiKey { key_id: 9, scopes: crate::access::ScopeSet::full() },
    }
}

fn rate(remaining: u32, retry: Option<u32>) -> RateLimitStatus {
    RateLimitStatus {
        policy: RateLimitPolicy::per_hour(1000),
        remaining,
        reset_after_secs: 3601,
        retry_after_secs: retry,
        now_epoch: 1,
    }
}

fn v1() -> Requirements {
    Requirements { plan: Some(PlanTier::Advanced), rate_limit: Some(RateLimitPolicy::per_hour(1000)), client: None }
}

#[test]
fn scheme_is_case_insensitive_and_others_are_refused() {
    assert_eq!(bearer_token(b"bEaReR  abc"), Ok("abc"));
    assert_eq!(bearer_token(b"Basic YWJj"), Err(InvalidToken::WrongScheme));
    assert_eq!(bearer_token(b"Bearer"), Err(InvalidToken::WrongScheme));
    assert_eq!(bearer_token(b"Bearer   "), Err(InvalidToken::WrongScheme));
    assert_eq!(bearer_token(b"wmsk_abc"), Err(InvalidToken::WrongScheme));
    assert_eq!(bearer_token(&[0x42, 0xff, 0x20, 0x41]), Err(InvalidToken::Malformed));
}

#[tokio::test]
async fn garbage_never_reaches_the_store() {
    let store = MockCredentialStore::new(); // any call would panic
    let mut typo = token(TokenKind::ApiKey);
    typo.replace_range(10..11, if &typo[10..11] == "a" { "b" } else { "a" });
    let typo = format!("Bearer {typo}");
    let cases: [(Option<&[u8]>, &str); 4] = [
        (None, "Missing"),
        (Some(b"Token abc"), "InvalidToken(WrongScheme)"),
        (Some(b"Bearer wmsk_short"), "InvalidToken(Malformed)"),
        (Some(typo.as_bytes()), "InvalidToken(BadChecksum)"),
    ];
    for (value, expected) in cases {
        let err = authenticate_v1_request(&store, value, &v1()).await.expect_err("refused");
        assert_eq!(format!("{err:?}"), expected);
    }
}

#[tokio::test]
async fn verdicts_map_to_errors() {
    let cases = [
        (CredentialCheck::Unknown, "InvalidToken(Unknown)"),
        (CredentialCheck::Revoked, "Revoked"),
        (CredentialCheck::MemberInactive, "Revoked"),
        (CredentialCheck::Expired, "Expired"),
        (CredentialCheck::WorkspaceInactive, "WorkspaceInactive"),
    ];
    for (check, expected) in cases {
        let mut store = MockCredentialStore::new();
        store.expect_verify().return_once(move |_, _| Ok(check));
        let err = authenticate_v1_request(&store, Some(&header(TokenKind::ApiKey)), &v1()).await.expect_err("refused");
        assert_eq!(format!("{err:?}"), expected);
    }
}

#[tokio::test]
async fn plan_and_limit_refusals_carry_the_window() {
    let mut store = MockCredentialStore::new();
    store.expect_verify().return_once(|_, _| {
        Ok(CredentialCheck::PlanRequired { identity: key_identity(PlanTier::Growth), rate: Some(rate(5, None)) })
    });
    let err = authenticate_v1_request(&store, Some(&header(TokenKind::ApiKey)), &v1()).await.expect_err("refused");
    assert!(matches!(
        err,
        AuthenticateError::PlanRequired { required: PlanTier::Advanced, current: PlanTier::Growth, rate: Some(_) }
    ));

    let mut store = MockCredentialStore::new();
    store.expect_verify().return_once(|_, _| {
        Ok(CredentialCheck::Limited { identity: key_identity(PlanTier::Advanced), rate: rate(0, Some(42)) })
    });
    let err = authenticate_v1_request(&store, Some(&header(TokenKind::ApiKey)), &v1()).await.expect_err("refused");
    assert_eq!(err.rate().and_then(|r| r.retry_after_secs), Some(42));
}

#[tokio::test]
async fn an_admitted_request_passes_the_requirements_to_the_store() {
    let mut store = MockCredentialStore::new();
    store.expect_verify().withf(|t, needs| t.kind == TokenKind::User && *needs == v1()).return_once(|_, _| {
        Ok(CredentialCheck::Admitted { identity: key_identity(PlanTier::Advanced), rate: Some(rate(999, None)) })
    });
    let ok = authenticate_v1_request(&store, Some(&header(TokenKind::User)), &v1()).await.expect("admitted");
    assert_eq!(ok.rate.map(|r| r.remaining), Some(999));
}

#[tokio::test]
async fn api_keys_are_not_member_credentials() {
    let store = MockCredentialStore::new();
    let err =
        authenticate_member(&store, None, MemberCredential::Authorization(&header(TokenKind::ApiKey)), WorkspaceId(1))
            .await
            .expect_err("refused");
    assert!(matches!(err, MemberAuthError::ApiKey));
}

#[tokio::test]
async fn a_token_of_another_workspace_is_not_a_member() {
    let mut store = MockCredentialStore::new();
    store.expect_verify().withf(|_, needs| *needs == Requirements::default()).returning(|_, _| {
        Ok(CredentialCheck::Admitted {
            identity: Identity {
                workspace_id: WorkspaceId(1),
                plan: PlanTier::Free,
                owner: CredentialOwner::User { user_id: UserId(5), role: Role::Agent },
            },
            rate: None,
        })
    });
    let h = header(TokenKind::User);
    let member =
        authenticate_member(&store, None, MemberCredential::Authorization(&h), WorkspaceId(1)).await.expect("member");
    assert_eq!((member.user_id, member.role, member.plan), (UserId(5), Role::Agent, PlanTier::Free));
    let err = authenticate_member(&store, None, MemberCredential::Authorization(&h), WorkspaceId(2))
        .await
        .expect_err("other workspace");
    assert!(matches!(err, MemberAuthError::NotMember));
}

#[tokio::test]
async fn sessions_need_the_hook_and_a_membership() {
    let store = MockCredentialStore::new();
    let err =
        authenticate_member(&store, None, MemberCredential::Session("abc"), WorkspaceId(1)).await.expect_err("no hook");
    assert!(matches!(err, MemberAuthError::Missing));

    let mut sessions = MockSessionLookup::new();
    sessions.expect_user_for_session().returning(|cookie| {
        let workspace_id = Some(WorkspaceId(if cookie == "abc" { 1 } else { 3 }));
        Ok(Some(crate::auth::SessionUser { user_id: UserId(5), workspace_id }))
    });
    sessions.expect_member().returning(|ws, user| {
        Ok((ws != WorkspaceId(2)).then_some(WorkspaceMember {
            workspace_id: ws,
            plan: PlanTier::Growth,
            user_id: user,
            role: Role::Admin,
        }))
    });
    let m = authenticate_member(&store, Some(&sessions), MemberCredential::Session("abc"), WorkspaceId(1)).await;
    assert!(m.is_ok());
    let err = authenticate_member(&store, Some(&sessions), MemberCredential::Session("abc"), WorkspaceId(2))
        .await
        .expect_err("not a member");
    assert!(matches!(err, MemberAuthError::NotMember));
    // A member of workspace 1 whose session works in workspace 3 is not let into 1 with it.
    let err = authenticate_member(&store, Some(&sessions), MemberCredential::Session("xyz"), WorkspaceId(1))
        .await
        .expect_err("session of another workspace");
    assert!(matches!(err, MemberAuthError::NotMember));
}
