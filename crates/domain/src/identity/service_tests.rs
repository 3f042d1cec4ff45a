//! Unit tests of the identity path, on mocks.

use std::sync::Arc;

use super::*;
use crate::access::ScopeSet;
use crate::auth::{presented_token, MockCredentialStore, MockSessionLookup, NewToken, WorkspaceMember};
use crate::common::ports::{MockClock, MockRandomSource};
use crate::oauth::MockOAuthStore;
use crate::rate_limit::RateLimitStatus;
use crate::users::{Role, UserId};
use crate::workspace::PlanTier;

fn token(kind: TokenKind) -> String {
    let mut r = MockRandomSource::new();
    r.expect_fill().returning(|b| b.fill(0x33));
    NewToken::generate(kind, &r).secret
}

fn header(kind: TokenKind) -> Vec<u8> {
    format!("Bearer {}", token(kind)).into_bytes()
}

fn policy() -> RateLimitPolicy {
    RateLimitPolicy::per_hour(1000)
}

fn apps() -> OAuthService {
    OAuthService {
        store: Arc::new(MockOAuthStore::new()),
        clock: Arc::new(MockClock::new()),
        random: Arc::new(MockRandomSource::new()),
    }
}

fn identity<'a>(
    store: &'a MockCredentialStore,
    sessions: Option<&'a MockSessionLookup>,
    apps: &'a OAuthService,
) -> IdentityService<'a> {
    IdentityService {
        credentials: store,
        sessions: sessions.map(|s| s as &dyn SessionLookup),
        apps,
        rate_limit: policy(),
    }
}

fn key_caller(plan: PlanTier, surface: Surface) -> Caller {
    Caller { workspace_id: WorkspaceId(1), plan, actor: Actor::ApiKey { key_id: 9, scopes: ScopeSet::full() }, surface }
}

fn member_caller(surface: Surface) -> Caller {
    Caller {
        workspace_id: WorkspaceId(1),
        plan: PlanTier::Free,
        actor: Actor::Member { user_id: UserId(5), role: Role::Agent },
        surface,
    }
}

fn rate(remaining: u32, retry: Option<u32>) -> RateLimitStatus {
    RateLimitStatus { policy: policy(), remaining, reset_after_secs: 3601, retry_after_secs: retry, now_epoch: 1 }
}

async fn rest(store: &MockCredentialStore, value: Option<&[u8]>) -> Result<Admission, AuthenticateError> {
    let apps = apps();
    let token = presented_token(value)?;
    identity(store, None, &apps).rest(&token, None).await
}

#[tokio::test]
async fn garbage_never_reaches_the_store() {
    let store = MockCredentialStore::new(); // any call would panic
    let mut typo = token(TokenKind::ApiKey);
    typo.replace_range(10..11, if &typo[10..11] == "a" { "b" } else { "a" });
    let typo = format!("Bearer {typo}");
    let cases: [(Option<&[u8]>, &str); 5] = [
        (None, "Missing"),
        (Some(b"Token abc"), "InvalidToken(WrongScheme)"),
        (Some(b"Bearer wmsk_short"), "InvalidToken(Malformed)"),
        (Some(typo.as_bytes()), "InvalidToken(BadChecksum)"),
        (Some(&header(TokenKind::AppAccess)), "InvalidToken(AppToken)"),
    ];
    for (value, expected) in cases {
        let err = rest(&store, value).await.expect_err("refused");
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
        let err = rest(&store, Some(&header(TokenKind::ApiKey))).await.expect_err("refused");
        assert_eq!(format!("{err:?}"), expected);
    }
}

#[tokio::test]
async fn plan_and_limit_refusals_carry_the_window() {
    let mut store = MockCredentialStore::new();
    store.expect_verify().return_once(|_, _| {
        Ok(CredentialCheck::Uncounted {
            caller: key_caller(PlanTier::Growth, Surface::RestApi),
            rate: Some(rate(5, None)),
        })
    });
    let err = rest(&store, Some(&header(TokenKind::ApiKey))).await.expect_err("refused");
    assert!(matches!(
        err,
        AuthenticateError::PlanRequired { required: PlanTier::Advanced, current: PlanTier::Growth, rate: Some(_) }
    ));

    let mut store = MockCredentialStore::new();
    store.expect_verify().return_once(|_, _| {
        Ok(CredentialCheck::Limited {
            caller: key_caller(PlanTier::Advanced, Surface::RestApi),
            rate: rate(0, Some(42)),
        })
    });
    let err = rest(&store, Some(&header(TokenKind::ApiKey))).await.expect_err("refused");
    assert_eq!(err.rate().and_then(|r| r.retry_after_secs), Some(42));
}

#[tokio::test]
async fn an_admitted_rest_request_is_the_caller_the_store_found() {
    let mut store = MockCredentialStore::new();
    let needs = Requirements {
        surface: Surface::RestApi,
        plan: Some(PlanTier::Advanced),
        rate_limit: Some(policy()),
        client: None,
    };
    store.expect_verify().withf(move |t, n| t.kind == TokenKind::User && *n == needs).return_once(|_, _| {
        Ok(CredentialCheck::Admitted { caller: member_caller(Surface::RestApi), rate: Some(rate(999, None)) })
    });
    let ok = rest(&store, Some(&header(TokenKind::User))).await.expect("admitted");
    assert_eq!(ok.rate.map(|r| r.remaining), Some(999));
    assert_eq!(ok.caller, member_caller(Surface::RestApi));
}

#[tokio::test]
async fn api_keys_are_not_member_credentials_but_are_looked_up_like_any_token() {
    let mut store = MockCredentialStore::new();
    let mut answers = vec![
        CredentialCheck::Admitted { caller: key_caller(PlanTier::Advanced, Surface::Settings), rate: None },
        CredentialCheck::Unknown,
        CredentialCheck::Revoked,
        CredentialCheck::Expired,
    ]
    .into_iter();
    store
        .expect_verify()
        .withf(|t, needs| t.kind == TokenKind::ApiKey && needs.rate_limit.is_none())
        .times(4)
        .returning(move |_, _| Ok(answers.next().expect("answer")));
    let (apps, h) = (apps(), header(TokenKind::ApiKey));
    let ids = identity(&store, None, &apps);
    let refusal = || ids.member(MemberCredential::Authorization(&h), WorkspaceId(1), Surface::Settings);
    assert!(matches!(refusal().await, Err(MemberAuthError::ApiKey)), "a valid key: 403");
    assert!(matches!(refusal().await, Err(MemberAuthError::InvalidToken(InvalidToken::Unknown))));
    assert!(matches!(refusal().await, Err(MemberAuthError::Revoked)));
    assert!(matches!(refusal().await, Err(MemberAuthError::Expired)));
}

#[tokio::test]
async fn a_token_of_another_workspace_is_not_a_member() {
    let mut store = MockCredentialStore::new();
    store
        .expect_verify()
        .withf(|_, needs| needs.plan.is_none() && needs.rate_limit.is_none())
        .returning(|_, needs| Ok(CredentialCheck::Admitted { caller: member_caller(needs.surface), rate: None }));
    let (apps, h) = (apps(), header(TokenKind::User));
    let ids = identity(&store, None, &apps);
    let caller =
        ids.member(MemberCredential::Authorization(&h), WorkspaceId(1), Surface::Settings).await.expect("member");
    assert_eq!(caller, member_caller(Surface::Settings));
    let err = ids
        .member(MemberCredential::Authorization(&h), WorkspaceId(2), Surface::Settings)
        .await
        .expect_err("other workspace");
    assert!(matches!(err, MemberAuthError::NotMember));
}

#[tokio::test]
async fn sessions_need_the_hook_and_a_membership() {
    let (store, apps) = (MockCredentialStore::new(), apps());
    let err = identity(&store, None, &apps)
        .member(MemberCredential::Session("abc"), WorkspaceId(1), Surface::Settings)
        .await
        .expect_err("no hook");
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
    let ids = identity(&store, Some(&sessions), &apps);
    let caller = ids.member(MemberCredential::Session("abc"), WorkspaceId(1), Surface::Assistant).await;
    assert_eq!(
        caller.expect("member"),
        Caller {
            workspace_id: WorkspaceId(1),
            plan: PlanTier::Growth,
            actor: Actor::Member { user_id: UserId(5), role: Role::Admin },
            surface: Surface::Assistant,
        }
    );
    let err = ids
        .member(MemberCredential::Session("abc"), WorkspaceId(2), Surface::Settings)
        .await
        .expect_err("not a member");
    assert!(matches!(err, MemberAuthError::NotMember));
    // A member of workspace 1 whose session works in workspace 3 is not let into 1 with it.
    let err = ids
        .member(MemberCredential::Session("xyz"), WorkspaceId(1), Surface::Settings)
        .await
        .expect_err("session of another workspace");
    assert!(matches!(err, MemberAuthError::NotMember));
}

#[tokio::test]
async fn the_assistant_admits_its_workspace_keys_counted_and_no_other() {
    let mut store = MockCredentialStore::new();
    store
        .expect_verify()
        .withf(|_, needs| needs.surface == Surface::Assistant && needs.rate_limit.is_some() && needs.plan.is_none())
        .returning(|_, _| {
            Ok(CredentialCheck::Admitted {
                caller: key_caller(PlanTier::Free, Surface::Assistant),
                rate: Some(rate(7, None)),
            })
        });
    let (apps, h) = (apps(), header(TokenKind::ApiKey));
    let ids = identity(&store, None, &apps);
    let ok = ids.assistant(MemberCredential::Authorization(&h), WorkspaceId(1), None).await.expect("admitted");
    // The plan is the policy's to judge: the caller carries it.
    assert_eq!(ok.caller, key_caller(PlanTier::Free, Surface::Assistant));
    assert_eq!(ok.rate.map(|r| r.remaining), Some(7));
    let err = ids.assistant(MemberCredential::Authorization(&h), WorkspaceId(2), None).await.expect_err("other");
    assert!(matches!(err, MemberAuthError::NotMember));
}
