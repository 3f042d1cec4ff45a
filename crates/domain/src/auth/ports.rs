//! Storage ports of authentication: verifying credentials (with the rate limit), login tokens,
//! users for sign-in, the sign-in throttle and the settings sessions.

use async_trait::async_trait;
use subtle::ConstantTimeEq;
use time::OffsetDateTime;

use super::model::WorkspaceMember;
use super::throttle::{ThrottlePolicy, ThrottleSubject};
use super::token::{PresentedToken, TokenDigest};
use crate::access::{Caller, Surface};
use crate::audit::AuditEntry;
use crate::common::error::RepoError;
use crate::common::ports::PasswordHash;
use crate::rate_limit::{RateLimitPolicy, RateLimitStatus};
use crate::users::{Email, Role, UserId};
use crate::workspace::{PlanTier, WorkspaceId};

/// What a request needs from its credential besides being valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Requirements {
    /// Where the request came in: the [`Caller`] of an admitted credential acts there.
    pub surface: Surface,
    /// The lowest plan whose workspaces' requests count, the policy's for the surface
    /// ([`crate::access::Surface::plan`]); `None` for every plan. A request of a workspace below it
    /// is [`CredentialCheck::Uncounted`], and the policy decides the answer.
    pub plan: Option<PlanTier>,
    /// The rate limit to count the request against; `None` for no counting.
    pub rate_limit: Option<RateLimitPolicy>,
    /// The client's address, recorded as an API key's `last_used_ip` whenever its `last_used_at`
    /// is (so it costs no write of its own). Part of what concurrent checks share: requests of
    /// one key from different addresses are checked in separate statements.
    pub client: Option<std::net::IpAddr>,
}

/// The verdict on a presented credential, reached in one atomic step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialCheck {
    /// No credential has this digest.
    Unknown,
    /// The credential was revoked.
    Revoked,
    /// The credential is past its expiry.
    Expired,
    /// The user's membership was deactivated.
    MemberInactive,
    /// The workspace was deactivated.
    WorkspaceInactive,
    /// Valid, but the workspace's plan is below [`Requirements::plan`]: the request was not
    /// counted (storage reports it; the access policy refuses it).
    Uncounted {
        /// Whose credential, as the one caller.
        caller: Caller,
        /// The window as it stands, when rate limited.
        rate: Option<RateLimitStatus>,
    },
    /// Valid, but the rate limit refused the request.
    Limited {
        /// Whose credential, as the one caller.
        caller: Caller,
        /// The window, with the retry delay.
        rate: RateLimitStatus,
    },
    /// Valid and admitted (and counted, when rate limited).
    Admitted {
        /// Whose credential, as the one caller.
        caller: Caller,
        /// The window after counting, when rate limited.
        rate: Option<RateLimitStatus>,
    },
}

impl CredentialCheck {
    /// The verdict on one counted request of `caller` whose place in the window is `rate` (one of
    /// [`spread`](crate::rate_limit::spread)'s): refused with its retry delay, or admitted.
    pub fn counted(caller: Caller, rate: RateLimitStatus) -> Self {
        if rate.is_limited() {
            CredentialCheck::Limited { caller, rate }
        } else {
            CredentialCheck::Admitted { caller, rate: Some(rate) }
        }
    }
}

/// A login token to store: its digest, never the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewUserToken {
    /// The membership's workspace.
    pub workspace_id: WorkspaceId,
    /// The membership's user.
    pub user_id: UserId,
    /// SHA-256 of the token.
    pub digest: TokenDigest,
    /// When it stops working.
    pub expires_at: OffsetDateTime,
    /// The password the sign-in checked, checked again where the token is stored.
    pub proof: SignInProof,
}

/// What proved who signs in, checked again in the transaction that stores the sign-in's token or
/// session, against the account's password as it is then (its row locked). A password reset
/// revokes every credential of the account; a sign-in whose password check ran just before the
/// reset committed and whose token would be stored just after it would otherwise outlive the
/// reset with the old password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignInProof {
    /// The password, verified against this stored hash.
    Password(PasswordHash),
    /// A one-time link (an accepted invitation) that stood in for the password.
    Link,
}

impl SignInProof {
    /// Whether the proof still holds for an account whose stored password hash is `current`: a
    /// password proof only while the hash it was verified against is still the account's.
    pub fn holds(&self, current: &PasswordHash) -> bool {
        match self {
            Self::Password(checked) => bool::from(checked.0.as_bytes().ct_eq(current.0.as_bytes())),
            Self::Link => true,
        }
    }
}

/// Whether a sign-in's token or session was stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInStored {
    /// Stored, with its records.
    Stored,
    /// Nothing stored: the password changed after it was checked ([`SignInProof::holds`]).
    PasswordChanged,
}

/// Verification of API keys and login tokens.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait CredentialStore: Send + Sync {
    /// Looks the credential up by digest and decides, in one round trip and atomically across
    /// instances: validity, whether the request counts (its plan), the rate limit's window
    /// (admitting or refusing this request, as [`crate::rate_limit::spread`] decides) and the
    /// credential's last-used time. The plan's refusal is the policy's. Nothing is cached: a revocation applies to the next request.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn verify(&self, token: &PresentedToken, needs: &Requirements) -> Result<CredentialCheck, RepoError>;

    /// Stores a new login token and its `user.signed_in` record in one transaction: a token is
    /// never issued without its record, nor recorded without being issued. Nothing is stored when
    /// the token's [`SignInProof`] no longer holds for the account, read with its row locked.
    ///
    /// # Errors
    /// Infrastructure failures only (nothing is stored then).
    async fn insert_user_token(&self, new: &NewUserToken, audit: &AuditEntry) -> Result<SignInStored, RepoError>;

    /// Revokes the login token with this digest (keeping the first revocation time).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn revoke_user_token(&self, digest: &TokenDigest, at: OffsetDateTime) -> Result<(), RepoError>;
}

/// A user as needed to sign in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginUser {
    /// The user.
    pub id: UserId,
    /// Their e-mail.
    pub email: String,
    /// Their display name.
    pub name: String,
    /// Their password hash.
    pub password_hash: PasswordHash,
}

/// One of a user's memberships, whatever its standing (the sign-in keeps those that count).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Membership {
    /// The workspace.
    pub workspace_id: WorkspaceId,
    /// Its plan.
    pub plan: PlanTier,
    /// The user's role there.
    pub role: Role,
    /// Whether it counts ([`super::Standing::counts`]).
    pub standing: super::Standing,
    /// The member's name in this workspace, when one was given there (else the account's).
    pub name: Option<String>,
}

/// Users and memberships, for sign-in and sessions.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait UserDirectory: Send + Sync {
    /// The user with this (normalised) e-mail.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn find_by_email(&self, email: &Email) -> Result<Option<LoginUser>, RepoError>;

    /// The user's memberships, whatever their standing, by workspace id.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn memberships(&self, user: UserId) -> Result<Vec<Membership>, RepoError>;
}

/// Failed sign-ins per subject, shared by every instance.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait LoginThrottleStore: Send + Sync {
    /// Reserves one attempt against every subject in one atomic step, before the password is
    /// checked: when no subject has used up its budget under `policy` at `now`, the attempt is
    /// counted against each (a subject whose window began `policy.window` or longer ago starts a
    /// new one) and `None` is returned; otherwise nothing is written and the answer is the seconds
    /// until the longest exhausted window ends. Concurrent reservations of a subject are serialised,
    /// so no more attempts than the budget ever pass.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn reserve(
        &self,
        subjects: &[ThrottleSubject],
        now: OffsetDateTime,
        policy: ThrottlePolicy,
    ) -> Result<Option<u64>, RepoError>;

    /// A reserved attempt succeeded: `forget` loses its failures (the e-mail from this client) and
    /// each of `refund` gets the reserved attempt back (the client network).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn release(&self, forget: &ThrottleSubject, refund: &[ThrottleSubject]) -> Result<(), RepoError>;
}

/// Who a valid settings session belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionUser {
    /// The signed-in user.
    pub user_id: UserId,
    /// The one workspace the session works in; `None` until a member of several picks one.
    pub workspace_id: Option<WorkspaceId>,
}

/// The settings web app's sessions (cookie `wms_session`, `crate::sessions`). Hook for
/// [`crate::identity::IdentityService::member`]: when no implementation is wired, cookies authenticate nobody.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait SessionLookup: Send + Sync {
    /// The user signed in with this session cookie value, if the session is valid now.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn user_for_session(&self, cookie_value: &str) -> Result<Option<SessionUser>, RepoError>;

    /// The user's membership in `ws` when it is active in an active workspace.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn member(&self, ws: WorkspaceId, user: UserId) -> Result<Option<WorkspaceMember>, RepoError>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Actor;

    #[test]
    fn a_counted_request_is_limited_exactly_when_its_window_gives_a_retry_delay() {
        let caller = Caller {
            workspace_id: WorkspaceId(1),
            plan: PlanTier::Advanced,
            actor: Actor::Member { user_id: UserId(2), role: Role::Agent },
            surface: Surface::RestApi,
        };
        let rate = RateLimitStatus {
            policy: RateLimitPolicy::per_hour(10),
            remaining: 0,
            reset_after_secs: 30,
            retry_after_secs: None,
            now_epoch: 1_700_000_000,
        };
        assert_eq!(CredentialCheck::counted(caller, rate), CredentialCheck::Admitted { caller, rate: Some(rate) });
        let refused = RateLimitStatus { retry_after_secs: Some(30), ..rate };
        assert_eq!(CredentialCheck::counted(caller, refused), CredentialCheck::Limited { caller, rate: refused });
    }
}
