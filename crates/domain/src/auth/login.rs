//! Signing in with e-mail and password for a login token (`wmsu_`) bound to one membership, and
//! signing out.

use std::net::IpAddr;

use time::{Duration, OffsetDateTime};

use super::ports::{
    CredentialCheck, CredentialStore, LoginThrottleStore, LoginUser, Membership, NewUserToken, Requirements,
    SignInProof, SignInStored, UserDirectory,
};
use super::throttle::{PasswordAttempt, ThrottlePolicy};
use super::token::{NewToken, TokenKind};
use super::verify::{admitted, presented_token, AuthenticateError};
use crate::access::{Actor, Surface};
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

impl LoggedIn {
    /// The name the member goes by in the token's workspace: theirs there, else the account's
    /// (as `GET /v1/users` shows them).
    pub fn member_name(&self) -> &str {
        self.membership.name.as_deref().unwrap_or(&self.user.name)
    }
}

/// Why sign-in failed.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// The input is invalid (422), including a missing `workspace_id` for a member of several.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Wrong e-mail or password, or a `workspace_id` where the account is not an active member;
    /// never says which (401 `invalid_credentials`).
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
    let membership = choose_membership(counting(ports, &user).await?, wanted)?;
    let token = NewToken::generate(TokenKind::User, ports.random);
    let expires_at = ports.clock.now() + settings.token_ttl;
    // The record goes in with the token, in its transaction (docs/contract.md, "Audit log").
    let record = sign_in_entry(&context, &user, membership.workspace_id, None);
    let new = NewUserToken {
        workspace_id: membership.workspace_id,
        user_id: user.id,
        digest: token.digest(),
        expires_at,
        proof: SignInProof::Password(user.password_hash.clone()),
    };
    match ports.credentials.insert_user_token(&new, &record).await? {
        SignInStored::Stored => {}
        // A reset changed the password after it was checked: the one given is wrong now.
        SignInStored::PasswordChanged => return Err(LoginError::InvalidCredentials),
    }
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
    // concurrent guesses cannot outrun the budget (`docs/contract.md`, "Abuse limits").
    let attempt = PasswordAttempt::new(&email, req.client);
    if let Some(retry_after_secs) = attempt.reserve(ports.throttle, ports.clock.now(), settings.throttle).await? {
        return Err(LoginError::Throttled { retry_after_secs });
    }

    let user = ports.users.find_by_email(&email).await?;
    // Same work whether or not the e-mail exists and whether or not its account has a password
    // yet (an invited person's has none): those are verified against a dummy hash, and fail.
    let stored = user.as_ref().map(|u| &u.password_hash).filter(|h| h.holds_a_password());
    let hash = stored.unwrap_or(&settings.dummy_hash);
    // No stored password is longer than the maximum; a longer one is wrong, not truncated into a match.
    let too_long = req.password.chars().count() > Password::MAX;
    let verified = ports.hasher.verify(&Password::attempt(&req.password), hash).await && stored.is_some();
    let Some(user) = user else { return Err(LoginError::InvalidCredentials) };
    if !verified || too_long {
        // The reservation stays: it was the failure. A wrong password for a known account goes
        // into the log of each workspace it belongs to (or the one it asked for).
        record_failure(ports, &req.context, &user, req.workspace_id).await?;
        return Err(LoginError::InvalidCredentials);
    }
    attempt.succeeded(ports.throttle).await?;
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

/// The user's memberships that count ([`super::Standing::counts`]).
async fn counting(ports: LoginPorts<'_>, user: &LoginUser) -> Result<Vec<Membership>, RepoError> {
    let mut all = ports.users.memberships(user.id).await?;
    all.retain(|m| m.standing.counts());
    Ok(all)
}

async fn record_failure(
    ports: LoginPorts<'_>,
    context: &AuditContext,
    user: &LoginUser,
    wanted: Option<WorkspaceId>,
) -> Result<(), RepoError> {
    let context = context.with_actor(actor_of(user));
    let entries: Vec<_> = counting(ports, user)
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
        // Named but not an active membership (none, invited, deactivated): answered as a wrong
        // password, so a sign-in tells nothing about memberships the person has not accepted.
        Some(ws) => all.into_iter().find(|m| m.workspace_id == ws).ok_or(LoginError::InvalidCredentials),
        None => match all.as_slice() {
            [] => Err(LoginError::NoWorkspace),
            [only] => Ok(only.clone()),
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
    /// API keys are revoked in the settings, not signed out (403 `forbidden`). The request
    /// counted in the key's window, which comes back for the response headers.
    #[error("API keys cannot sign out: revoke the key in the workspace settings")]
    ApiKey {
        /// The key's window after counting the request.
        rate: Option<RateLimitStatus>,
    },
}

impl LogoutError {
    /// The window the answer's rate-limit headers show, when the request was counted.
    pub fn rate(&self) -> Option<&RateLimitStatus> {
        match self {
            LogoutError::Auth(a) => a.rate(),
            LogoutError::ApiKey { rate } => rate.as_ref(),
        }
    }
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
    let needs = Requirements { surface: Surface::RestApi, plan: None, rate_limit: Some(policy), client: None };
    let (caller, rate, limited) = match store.verify(&token, &needs).await.map_err(AuthenticateError::from)? {
        CredentialCheck::Limited { caller, rate } => (caller, Some(rate), true),
        other => {
            let ok = admitted(other)?;
            (ok.caller, ok.rate, false)
        }
    };
    if let Actor::ApiKey { .. } = caller.actor {
        // A key is answered as any `/v1` request of its own: over its limit, 429.
        return Err(match (limited, rate) {
            (true, Some(rate)) => AuthenticateError::Limited { rate }.into(),
            (_, rate) => LogoutError::ApiKey { rate },
        });
    }
    store.revoke_user_token(&token.digest, clock.now()).await.map_err(AuthenticateError::from)?;
    Ok(rate)
}

#[cfg(test)]
#[path = "login_tests.rs"]
mod tests;
