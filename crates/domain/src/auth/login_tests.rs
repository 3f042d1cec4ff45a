//! Unit tests of signing in and out for a login token, on mocks.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use time::macros::datetime;

use super::*;
use crate::access::{Actor, Caller, Surface};
use crate::auth::{parse, MockCredentialStore, MockLoginThrottleStore, MockUserDirectory, Standing, ThrottleSubject};
use crate::common::ports::{MockClock, MockPasswordHasher, MockRandomSource};
use crate::users::{Role, UserId};
use crate::workspace::PlanTier;

const NOW: OffsetDateTime = datetime!(2026-11-20 12:00 UTC);

struct World {
    users: MockUserDirectory,
    credentials: MockCredentialStore,
    throttle: MockLoginThrottleStore,
    hasher: MockPasswordHasher,
    clock: MockClock,
    random: MockRandomSource,
    audit: crate::audit::MockAuditRepository,
}

impl World {
    fn new() -> Self {
        let mut clock = MockClock::new();
        clock.expect_now().return_const(NOW);
        let mut random = MockRandomSource::new();
        random.expect_fill().returning(|b| b.fill(7));
        let mut hasher = MockPasswordHasher::new();
        hasher.expect_verify().returning(|pw, hash| pw.expose() == "right password" && hash.0 == "$real");
        Self {
            users: MockUserDirectory::new(),
            credentials: MockCredentialStore::new(),
            throttle: MockLoginThrottleStore::new(),
            hasher,
            clock,
            random,
            audit: {
                let mut a = crate::audit::MockAuditRepository::new();
                a.expect_record().returning(|_| Ok(()));
                a
            },
        }
    }

    fn ports(&self) -> LoginPorts<'_> {
        LoginPorts {
            users: &self.users,
            credentials: &self.credentials,
            throttle: &self.throttle,
            hasher: &self.hasher,
            clock: &self.clock,
            random: &self.random,
            audit: &self.audit,
        }
    }

    fn with_user(mut self, memberships: Vec<Membership>) -> Self {
        self.users.expect_find_by_email().returning(|e| {
            Ok((e.as_str() == "ann@example.com").then(|| LoginUser {
                id: UserId(4),
                email: "ann@example.com".into(),
                name: "Ann".into(),
                password_hash: PasswordHash("$real".into()),
            }))
        });
        self.users.expect_memberships().returning(move |_| Ok(memberships.clone()));
        self
    }

    fn with_clean_throttle(mut self) -> Self {
        self.throttle.expect_reserve().returning(|_, _, _| Ok(None));
        self
    }
}

fn settings() -> LoginSettings {
    LoginSettings {
        token_ttl: Duration::hours(24),
        throttle: ThrottlePolicy::default(),
        dummy_hash: PasswordHash("$dummy".into()),
    }
}

fn member(ws: i64) -> Membership {
    Membership {
        workspace_id: WorkspaceId(ws),
        plan: PlanTier::Advanced,
        role: Role::Admin,
        standing: Standing::ACTIVE,
        name: None,
    }
}

fn req(email: &str, password: &str, ws: Option<i64>) -> LoginRequest {
    LoginRequest {
        email: email.into(),
        password: password.into(),
        workspace_id: ws.map(WorkspaceId),
        client: Some("10.0.0.1".parse().expect("ip")),
        context: AuditContext::system(),
    }
}

#[tokio::test]
async fn right_password_gives_a_token_bound_to_the_membership_that_expires() {
    let mut w = World::new().with_user(vec![member(3)]).with_clean_throttle();
    w.throttle
        .expect_release()
        .withf(|pair, refund| {
            pair.as_str() == "email:ip:10.0.0.1 ann@example.com"
                && refund.iter().map(ThrottleSubject::as_str).collect::<Vec<_>>() == ["ip:10.0.0.1"]
        })
        .times(1)
        .returning(|_, _| Ok(()));
    w.credentials
        .expect_insert_user_token()
        .withf(|t, record| {
            t.workspace_id == WorkspaceId(3)
                && t.user_id == UserId(4)
                && t.expires_at == NOW + Duration::hours(24)
                && record.action == AuditAction::UserSignedIn
                && record.workspace_id == WorkspaceId(3)
                && record.context.actor.id == Some(4)
        })
        .times(1)
        .returning(|_, _| Ok(SignInStored::Stored));
    let ok = login(w.ports(), &settings(), req(" Ann@Example.com ", "right password", None)).await.expect("ok");
    assert_eq!(parse(&ok.token.secret).map(|t| t.kind), Ok(TokenKind::User));
    assert_eq!(ok.membership.workspace_id, WorkspaceId(3));
}

#[tokio::test]
async fn unknown_email_and_wrong_password_fail_alike_after_the_same_hashing() {
    let verified = Arc::new(AtomicUsize::new(0));
    let mut w = World::new().with_user(vec![member(3)]);
    let seen = verified.clone();
    w.hasher = MockPasswordHasher::new();
    w.hasher.expect_verify().returning(move |_, hash| {
        assert!(hash.0 == "$real" || hash.0 == "$dummy");
        seen.fetch_add(1, Ordering::SeqCst);
        false
    });
    // Both attempts are reserved against the e-mail from this client and the client, and
    // nothing is given back (no `release` is expected: a call would fail the test).
    w.throttle
        .expect_reserve()
        .withf(|subjects, now, policy| {
            subjects.len() == 2
                && subjects[0].as_str().starts_with("email:ip:10.0.0.1 ")
                && subjects[1].as_str() == "ip:10.0.0.1"
                && *now == NOW
                && *policy == ThrottlePolicy::default()
        })
        .times(2)
        .returning(|_, _, _| Ok(None));
    let a = login(w.ports(), &settings(), req("nobody@example.com", "right password", None)).await;
    let b = login(w.ports(), &settings(), req("ann@example.com", "wrong password", None)).await;
    assert!(matches!(a, Err(LoginError::InvalidCredentials)));
    assert!(matches!(b, Err(LoginError::InvalidCredentials)));
    assert_eq!(verified.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_account_without_a_password_costs_the_same_hashing_and_never_signs_in() {
    let hashed = Arc::new(AtomicUsize::new(0));
    let mut w = World::new().with_clean_throttle();
    w.users.expect_find_by_email().returning(|_| {
        Ok(Some(LoginUser {
            id: UserId(4),
            email: "invited@example.com".into(),
            name: "Invited".into(),
            password_hash: PasswordHash("!invited".into()),
        }))
    });
    w.users.expect_memberships().returning(|_| Ok(vec![member(3)]));
    let seen = hashed.clone();
    w.hasher = MockPasswordHasher::new();
    // Verified against the dummy hash, as an unknown address is; even a hasher that said yes
    // would not let it in.
    w.hasher.expect_verify().returning(move |_, hash| {
        assert_eq!(hash.0, "$dummy");
        seen.fetch_add(1, Ordering::SeqCst);
        true
    });
    let got = login(w.ports(), &settings(), req("invited@example.com", "anything at all", None)).await;
    assert!(matches!(got, Err(LoginError::InvalidCredentials)));
    assert_eq!(hashed.load(Ordering::SeqCst), 1);
    assert!(
        !PasswordHash("!invited".into()).holds_a_password() && PasswordHash("$argon2id$x".into()).holds_a_password()
    );
}

#[tokio::test]
async fn a_wrong_password_is_recorded_in_each_workspace_of_the_account_or_the_one_named() {
    for (wanted, expected) in [(None, vec![3, 8]), (Some(8), vec![8])] {
        let mut w = World::new().with_user(vec![member(3), member(8)]).with_clean_throttle();
        w.audit = crate::audit::MockAuditRepository::new();
        let want = expected.clone();
        w.audit
            .expect_record()
            .times(1)
            .withf(move |entries| {
                entries.iter().map(|e| e.workspace_id.0).collect::<Vec<_>>() == want
                    && entries.iter().all(|e| {
                        e.action == AuditAction::UserSignInFailed
                            && e.context.actor.id == Some(4)
                            && !e.details.to_string().contains("Guess#1234")
                    })
            })
            .returning(|_| Ok(()));
        let err = login(w.ports(), &settings(), req("ann@example.com", "Guess#1234", wanted)).await;
        assert!(matches!(err, Err(LoginError::InvalidCredentials)));
    }
}

#[tokio::test]
async fn a_throttled_subject_is_refused_before_any_hashing() {
    let mut w = World::new();
    w.hasher = MockPasswordHasher::new(); // any verification would panic
    w.throttle.expect_reserve().times(1).returning(|_, _, _| Ok(Some(300)));
    let err = login(w.ports(), &settings(), req("ann@example.com", "right password", None)).await;
    assert!(matches!(err, Err(LoginError::Throttled { retry_after_secs: 300 })));
}

#[tokio::test]
async fn several_memberships_need_a_choice() {
    let mut w = World::new().with_user(vec![member(8), member(3)]).with_clean_throttle();
    w.throttle.expect_release().returning(|_, _| Ok(()));
    w.credentials
        .expect_insert_user_token()
        .withf(|t, record| t.workspace_id == WorkspaceId(8) && record.workspace_id == WorkspaceId(8))
        .returning(|_, _| Ok(SignInStored::Stored));
    let Err(LoginError::Invalid(e)) =
        login(w.ports(), &settings(), req("ann@example.com", "right password", None)).await
    else {
        panic!("expected a validation failure");
    };
    assert_eq!(e.0[0].field, "workspace_id");
    assert!(e.0[0].message.contains("3, 8"));
    let ok = login(w.ports(), &settings(), req("ann@example.com", "right password", Some(8))).await;
    assert!(ok.is_ok());
    let foreign = login(w.ports(), &settings(), req("ann@example.com", "right password", Some(5))).await;
    assert!(matches!(foreign, Err(LoginError::InvalidCredentials)));
}

#[tokio::test]
async fn no_membership_is_forbidden() {
    let mut w = World::new().with_user(vec![]).with_clean_throttle();
    w.throttle.expect_release().returning(|_, _| Ok(()));
    let err = login(w.ports(), &settings(), req("ann@example.com", "right password", None)).await;
    assert!(matches!(err, Err(LoginError::NoWorkspace)));
}

#[tokio::test]
async fn a_membership_that_does_not_count_signs_in_nowhere() {
    let off = |member_active, workspace_active| Membership {
        standing: Standing { member_active, workspace_active },
        ..member(3)
    };
    for stored in [off(false, true), off(true, false)] {
        let mut w = World::new().with_user(vec![stored.clone(), off(false, false)]).with_clean_throttle();
        w.throttle.expect_release().returning(|_, _| Ok(()));
        let err = login(w.ports(), &settings(), req("ann@example.com", "right password", None)).await;
        assert!(matches!(err, Err(LoginError::NoWorkspace)), "{stored:?}");
    }
    // Beside one that counts, the others are not offered.
    let mut w = World::new().with_user(vec![off(false, true), member(8)]).with_clean_throttle();
    w.throttle.expect_release().returning(|_, _| Ok(()));
    w.credentials.expect_insert_user_token().times(1).returning(|_, _| Ok(SignInStored::Stored));
    let ok = login(w.ports(), &settings(), req("ann@example.com", "right password", None)).await.expect("signed in");
    assert_eq!(ok.membership.workspace_id, WorkspaceId(8));
}

#[tokio::test]
async fn a_password_changed_after_its_check_issues_no_token() {
    let mut w = World::new().with_user(vec![member(3)]).with_clean_throttle();
    w.throttle.expect_release().returning(|_, _| Ok(()));
    // The token is stored with the hash the password was verified against, to be checked again.
    w.credentials
        .expect_insert_user_token()
        .withf(|t, _| t.proof == SignInProof::Password(PasswordHash("$real".into())))
        .times(1)
        .returning(|_, _| Ok(SignInStored::PasswordChanged));
    let err = login(w.ports(), &settings(), req("ann@example.com", "right password", None)).await;
    assert!(matches!(err, Err(LoginError::InvalidCredentials)), "{err:?}");
}

#[test]
fn a_password_proof_holds_only_against_the_hash_it_was_checked_against() {
    let checked = SignInProof::Password(PasswordHash("$argon2id$v=19$old".into()));
    assert!(checked.holds(&PasswordHash("$argon2id$v=19$old".into())));
    assert!(!checked.holds(&PasswordHash("$argon2id$v=19$new".into())));
    assert!(!checked.holds(&PasswordHash("!invited".into())));
    // A one-time link stood in for the password: whatever the password is now.
    assert!(SignInProof::Link.holds(&PasswordHash("$argon2id$v=19$new".into())));
}

#[tokio::test]
async fn blank_fields_are_named() {
    let w = World::new();
    let Err(LoginError::Invalid(e)) = login(w.ports(), &settings(), req(" ", "", None)).await else {
        panic!("expected a validation failure");
    };
    let fields: Vec<&str> = e.0.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(fields, ["email", "password"]);
}

fn user_caller() -> Caller {
    Caller {
        workspace_id: WorkspaceId(1),
        plan: PlanTier::Free,
        actor: Actor::Member { user_id: UserId(4), role: Role::Agent },
        surface: Surface::RestApi,
    }
}

fn user_header() -> Vec<u8> {
    let mut r = MockRandomSource::new();
    r.expect_fill().returning(|b| b.fill(1));
    format!("Bearer {}", NewToken::generate(TokenKind::User, &r).secret).into_bytes()
}

#[tokio::test]
async fn logout_revokes_on_any_plan_even_when_rate_limited() {
    let mut w = World::new();
    let status = RateLimitStatus {
        policy: RateLimitPolicy::per_hour(1),
        remaining: 0,
        reset_after_secs: 10,
        retry_after_secs: Some(10),
        now_epoch: 0,
    };
    w.credentials
        .expect_verify()
        .withf(|_, needs| needs.plan.is_none())
        .returning(move |_, _| Ok(CredentialCheck::Limited { caller: user_caller(), rate: status }));
    w.credentials.expect_revoke_user_token().withf(|_, at| *at == NOW).times(1).returning(|_, _| Ok(()));
    let rate = logout(&w.credentials, &w.clock, Some(&user_header()), RateLimitPolicy::per_hour(1)).await;
    assert_eq!(rate.ok().flatten().map(|r| r.remaining), Some(0));
}

fn window(remaining: u32, retry_after_secs: Option<u32>) -> RateLimitStatus {
    RateLimitStatus {
        policy: RateLimitPolicy::per_hour(5),
        remaining,
        reset_after_secs: 10,
        retry_after_secs,
        now_epoch: 0,
    }
}

#[tokio::test]
async fn logout_refuses_api_keys_with_their_window_and_revoked_tokens() {
    let key = Caller { actor: Actor::ApiKey { key_id: 1, scopes: crate::access::ScopeSet::full() }, ..user_caller() };
    let mut w = World::new();
    w.credentials
        .expect_verify()
        .times(1)
        .returning(move |_, _| Ok(CredentialCheck::Admitted { caller: key, rate: Some(window(4, None)) }));
    let err = logout(&w.credentials, &w.clock, Some(&user_header()), RateLimitPolicy::per_hour(5)).await;
    assert!(matches!(&err, Err(LogoutError::ApiKey { rate: Some(r) }) if r.remaining == 4), "{err:?}");
    // A key over its limit is answered 429, as any of its requests.
    let mut w = World::new();
    w.credentials
        .expect_verify()
        .returning(move |_, _| Ok(CredentialCheck::Limited { caller: key, rate: window(0, Some(10)) }));
    let err = logout(&w.credentials, &w.clock, Some(&user_header()), RateLimitPolicy::per_hour(5)).await;
    assert!(matches!(err, Err(LogoutError::Auth(AuthenticateError::Limited { .. }))), "{err:?}");
    let mut w = World::new();
    w.credentials.expect_verify().returning(|_, _| Ok(CredentialCheck::Revoked));
    let err = logout(&w.credentials, &w.clock, Some(&user_header()), RateLimitPolicy::per_hour(5)).await;
    assert!(matches!(err, Err(LogoutError::Auth(AuthenticateError::Revoked))));
}
