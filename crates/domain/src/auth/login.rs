//! Signing in with e-mail and password for a login token (`wmsu_`) bound to one membership, and
//! signing out.

use std::net::IpAddr;

use time::{Duration, OffsetDateTime};

use super::model::CredentialOwner;
use super::ports::{
    CredentialCheck, CredentialStore, LoginThrottleStore, LoginUser, Membership, NewUserToken, Requirements,
    UserDirectory,
};
use super::throttle::{ThrottlePolicy, ThrottleSubject};
use super::token::{NewToken, TokenKind};
use super::verify::{admitted, presented_token, AuthenticateError};
use crate::audit::{ActorType, AuditAction, AuditActor, AuditContext, AuditEntry, AuditRepository, AuditTarget};
use crate::common::error::{FieldError, RepoError, ValidationErrors};
use crate::common::ports::{Clock, PasswordHash, PasswordHasher, RandomSource};
use crate::rate_limit::{RateLimitPolicy, RateLimitStatus};
use crate::users::{Email, Password};
use crate::workspace::WorkspaceId;

/// A sign-in attempt. Its `Debug` never shows the password.
#[derive(Clone)]
pub struct LoginRequest {
    /// The e-mail typed.
    pub email: String,
    /// The password typed, as typed.
    pub password: String,
    /// The workspace to sign in to, needed when the user belongs to several.
    pub workspace_id: Option<WorkspaceId>,
    /// The client's address, for the throttle.
    pub client: Option<IpAddr>,
    /// Where the attempt came from, for the audit log (its actor becomes the account's).
    pub context: AuditContext,
}

impl std::fmt::Debug for LoginRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginRequest")
            .field("email", &self.email)
            .field("workspace_id", &self.workspace_id)
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

/// How sign-in behaves.
#[derive(Debug, Clone)]
pub struct LoginSettings {
    /// Lifetime of a login token.
    pub token_ttl: Duration,
    /// Failed sign-in limits.
    pub throttle: ThrottlePolicy,
    /// A hash with the production parameters of a password nobody has, verified when the e-mail
    /// is unknown so that both failures take the same time.
    pub dummy_hash: PasswordHash,
}

/// What sign-in needs from the outside world.
#[derive(Clone, Copy)]
pub struct LoginPorts<'a> {
    /// Users and memberships.
    pub users: &'a dyn UserDirectory,
    /// Where the token is stored.
    pub credentials: &'a dyn CredentialStore,
    /// The failed sign-in counters.
    pub throttle: &'a dyn LoginThrottleStore,
    /// argon2id.
    pub hasher: &'a dyn PasswordHasher,
    /// Now.
    pub clock: &'a dyn Clock,
    /// The OS CSPRNG.
    pub random: &'a dyn RandomSource,
    /// The audit log (`user.signed_in`, `user.sign_in_failed`).
    pub audit: &'a dyn AuditRepository,
}

/// A successful sign-in.
#[derive(Debug)]
pub struct LoggedIn {
    /// The new token, to show once.
    pub token: NewToken,
    /// When it stops working.
    pub expires_at: OffsetDateTime,
    /// The membership it is bound to.
    pub membership: Membership,
    /// The user.
    pub user: LoginUser,
}

/// Why sign-in failed.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// The input is invalid (422), including a missing or foreign `workspace_id`.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Wrong e-mail or password; never says which (401 `invalid_credentials`).
    #[error("the e-mail or password is wrong")]
    InvalidCredentials,
    /// Too many failures for this e-mail or client (429).
    #[error("too many failed sign-ins; retry in {retry_after_secs} seconds")]
    Throttled {
        /// Seconds until attempts are allowed again.
        retry_after_secs: u64,
    },
    /// The credentials are right but the user has no active membership (403 `forbidden`).
    #[error("this account is not an active member of any workspace")]
    NoWorkspace,
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Signs in: throttle check, user lookup, argon2id verification (against a dummy hash for unknown
/// e-mails), membership choice, and a new login token that expires after the configured TTL.
///
/// # Errors
/// [`LoginError`].
pub async fn login(ports: LoginPorts<'_>, settings: &LoginSettings, req: LoginRequest) -> Result<LoggedIn, LoginError> {
    let wanted = req.workspace_id;
    let context = req.context.clone();
    let user = check_credentials(ports, settings, req).await?;
    let membership = choose_membership(ports.users.memberships(user.id).await?, wanted)?;
    let token = NewToken::generate(TokenKind::User, ports.random);
    let expires_at = ports.clock.now() + settings.token_ttl;
    // The record goes in with the token, in its transaction (decisions.md, "Audit log").
    let record = sign_in_entry(&context, &user, membership.workspace_id, None);
    ports
        .credentials
        .insert_user_token(
            &NewUserToken {
                workspace_id: membership.workspace_id,
                user_id: user.id,
                digest: token.digest(),
                expires_at,
            },
            &record,
        )
        .await?;
    Ok(LoggedIn { token, expires_at, membership, user })
}

/// The password check of every sign-in (the login API and the settings pages): validation, the
/// throttle, user lookup and argon2id verification (against a dummy hash for unknown e-mails).
/// Each attempt is reserved against the e-mail from this client and against the client before
/// the hash is computed; a success gives the reservation back and clears the e-mail's count.
///
/// # Errors
/// [`LoginError::Invalid`], [`LoginError::Throttled`], [`LoginError::InvalidCredentials`].
pub async fn check_credentials(
    ports: LoginPorts<'_>,
    settings: &LoginSettings,
    req: LoginRequest,
) -> Result<LoginUser, LoginError> {
    let mut errors = ValidationErrors::default();
    let email = if req.email.trim().is_empty() {
        errors.0.push(FieldError::new("email", "must not be empty"));
        None
    } else {
        errors.check(Email::new("email", &req.email))
    };
    if req.password.is_empty() {
        errors.0.push(FieldError::new("password", "must not be empty"));
    }
    errors.clone().into_result()?;
    let Some(email) = email else { return Err(LoginError::Invalid(errors)) };

    // Reserved before any hashing: the attempt counts as a failure until it proves otherwise, so
    // concurrent guesses cannot outrun the budget (spec "Abuse limits").
    let pair = ThrottleSubject::email_from(&email, req.client);
    let clients: Vec<ThrottleSubject> = req.client.map(ThrottleSubject::client).into_iter().collect();
    let mut subjects = vec![pair.clone()];
    subjects.extend(clients.iter().cloned());
    if let Some(retry_after_secs) = ports.throttle.reserve(&subjects, ports.clock.now(), settings.throttle).await? {
        return Err(LoginError::Throttled { retry_after_secs });
    }

    let user = ports.users.find_by_email(&email).await?;
    // Same work whether or not the e-mail exists: an unknown one is verified against a dummy hash.
    let hash = user.as_ref().map_or(&settings.dummy_hash, |u| &u.password_hash);
    // No stored password is longer than the maximum; a longer one is wrong, not truncated into a match.
    let too_long = req.password.chars().count() > Password::MAX;
    let verified = ports.hasher.verify(&Password::attempt(&req.password), hash).await;
    let Some(user) = user else { return Err(LoginError::InvalidCredentials) };
    if !verified || too_long {
        // The reservation stays: it was the failure. A wrong password for a known account goes
        // into the log of each workspace it belongs to (or the one it asked for).
        record_failure(ports, &req.context, &user, req.workspace_id).await?;
        return Err(LoginError::InvalidCredentials);
    }
    ports.throttle.release(&pair, &clients).await?;
    Ok(user)
}

fn actor_of(user: &LoginUser) -> AuditActor {
    AuditActor { kind: ActorType::User, id: Some(user.id.0), label: Some(user.email.clone()) }
}

/// The `user.signed_in` record of `user` in `ws`, for the store that opens the token or session
/// to write in its transaction. `via` says how the identity was proven when it was not the
/// password (`invitation`).
pub fn sign_in_entry(context: &AuditContext, user: &LoginUser, ws: WorkspaceId, via: Option<&str>) -> AuditEntry {
    let details = via.map_or_else(|| serde_json::json!({}), |v| serde_json::json!({ "via": v }));
    context.with_actor(actor_of(user)).entry(ws, AuditAction::UserSignedIn, AuditTarget::user(Some(user.id.0)), details)
}

async fn record_failure(
    ports: LoginPorts<'_>,
    context: &AuditContext,
    user: &LoginUser,
    wanted: Option<WorkspaceId>,
) -> Result<(), RepoError> {
    let context = context.with_actor(actor_of(user));
    let entries: Vec<_> = ports
        .users
        .memberships(user.id)
        .await?
        .into_iter()
        .filter(|m| wanted.is_none_or(|w| w == m.workspace_id))
        .map(|m| {
            context.entry(
                m.workspace_id,
                AuditAction::UserSignInFailed,
                AuditTarget::user(Some(user.id.0)),
                serde_json::json!({ "reason": "wrong password" }),
            )
        })
        .collect();
    if entries.is_empty() {
        return Ok(());
    }
    ports.audit.record(&entries).await
}

fn choose_membership(mut all: Vec<Membership>, wanted: Option<WorkspaceId>) -> Result<Membership, LoginError> {
    all.sort_by_key(|m| m.workspace_id);
    match wanted {
        Some(ws) => all.into_iter().find(|m| m.workspace_id == ws).ok_or_else(|| {
            ValidationErrors::one("workspace_id", "you are not an active member of this workspace").into()
        }),
        None => match all.as_slice() {
            [] => Err(LoginError::NoWorkspace),
            [only] => Ok(*only),
            several => {
                let ids: Vec<String> = several.iter().map(|m| m.workspace_id.to_string()).collect();
                Err(ValidationErrors::one(
                    "workspace_id",
                    format!("you are a member of several workspaces ({}): choose one", ids.join(", ")),
                )
                .into())
            }
        },
    }
}

/// Why sign-out failed.
#[derive(Debug, thiserror::Error)]
pub enum LogoutError {
    /// The credential is missing, invalid, revoked or expired.
    #[error(transparent)]
    Auth(#[from] AuthenticateError),
    /// API keys are revoked in the settings, not signed out (403 `forbidden`).
    #[error("API keys cannot sign out: revoke the key in the workspace settings")]
    ApiKey,
}

/// Revokes the login token of an `Authorization` header. The request counts against the token's
/// rate limit like any `/v1` request, but a refused request still revokes: ending a session is
/// never held back. Any plan may sign out.
///
/// # Errors
/// [`LogoutError`].
pub async fn logout(
    store: &dyn CredentialStore,
    clock: &dyn Clock,
    authorization: Option<&[u8]>,
    policy: RateLimitPolicy,
) -> Result<Option<RateLimitStatus>, LogoutError> {
    let token = presented_token(authorization)?;
    let needs = Requirements { plan: None, rate_limit: Some(policy) };
    let (identity, rate) = match store.verify(&token, &needs).await.map_err(AuthenticateError::from)? {
        CredentialCheck::Limited { identity, rate } => (identity, Some(rate)),
        other => {
            let ok = admitted(other, &needs)?;
            (ok.identity, ok.rate)
        }
    };
    if let CredentialOwner::ApiKey { .. } = identity.owner {
        return Err(LogoutError::ApiKey);
    }
    store.revoke_user_token(&token.digest, clock.now()).await.map_err(AuthenticateError::from)?;
    Ok(rate)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use time::macros::datetime;

    use super::*;
    use crate::auth::{parse, Identity, MockCredentialStore, MockLoginThrottleStore, MockUserDirectory};
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
        Membership { workspace_id: WorkspaceId(ws), plan: PlanTier::Advanced, role: Role::Admin }
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
            .returning(|_, _| Ok(()));
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
            .returning(|_, _| Ok(()));
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
        assert!(matches!(foreign, Err(LoginError::Invalid(_))));
    }

    #[tokio::test]
    async fn no_membership_is_forbidden() {
        let mut w = World::new().with_user(vec![]).with_clean_throttle();
        w.throttle.expect_release().returning(|_, _| Ok(()));
        let err = login(w.ports(), &settings(), req("ann@example.com", "right password", None)).await;
        assert!(matches!(err, Err(LoginError::NoWorkspace)));
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

    fn user_identity() -> Identity {
        Identity {
            workspace_id: WorkspaceId(1),
            plan: PlanTier::Free,
            owner: CredentialOwner::User { user_id: UserId(4), role: Role::Agent },
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
            .returning(move |_, _| Ok(CredentialCheck::Limited { identity: user_identity(), rate: status }));
        w.credentials.expect_revoke_user_token().withf(|_, at| *at == NOW).times(1).returning(|_, _| Ok(()));
        let rate = logout(&w.credentials, &w.clock, Some(&user_header()), RateLimitPolicy::per_hour(1)).await;
        assert_eq!(rate.ok().flatten().map(|r| r.remaining), Some(0));
    }

    #[tokio::test]
    async fn logout_refuses_api_keys_and_revoked_tokens() {
        let mut w = World::new();
        w.credentials.expect_verify().times(1).returning(|_, _| {
            Ok(CredentialCheck::Admitted {
                identity: Identity {
                    owner: CredentialOwner::ApiKey { key_id: 1, scopes: crate::access::ScopeSet::full() },
                    ..user_identity()
                },
                rate: None,
            })
        });
        let err = logout(&w.credentials, &w.clock, Some(&user_header()), RateLimitPolicy::per_hour(5)).await;
        assert!(matches!(err, Err(LogoutError::ApiKey)));
        let mut w = World::new();
        w.credentials.expect_verify().returning(|_, _| Ok(CredentialCheck::Revoked));
        let err = logout(&w.credentials, &w.clock, Some(&user_header()), RateLimitPolicy::per_hour(5)).await;
        assert!(matches!(err, Err(LogoutError::Auth(AuthenticateError::Revoked))));
    }
}
