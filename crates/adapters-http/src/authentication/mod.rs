//! Who is calling. Two extractors cover every protected route:
//! - [`V1Caller`] for `/v1`: an API key or a user token, on an `advanced` workspace, rate-limited.
//! - [`Member`] for `/api/workspaces/{workspace_id}/…` and `/workspaces/{workspace_id}/co-admin/…`:
//!   a user token or the settings session cookie of a member of that workspace. API keys are not
//!   member credentials (403 `forbidden`); a non-member gets 404 `not_found`.
//!
//! actix polls all of a handler's extractors at once and answers with the first error, so an
//! extractor that queries the database could lose the race to, say, a malformed query string (a
//! 422 to an unauthenticated caller). Hence the credential checks run in middleware before the
//! handler ([`v1::authenticate_v1`] on the `/v1` scope, [`member::authenticate_members`] on
//! workspace-scoped scopes), which leave the result in the request's extensions for the
//! extractors. Outside such a scope the extractors do the check themselves.

use std::future::Future;
use std::pin::Pin;

use std::sync::Arc;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use domain::access::{Actor, Caller, ScopeSet, Surface};
use domain::api_keys::ApiKeyRepository;
use domain::auth::{
    CredentialOwner, CredentialStore, Identity, LoginPorts, LoginSettings, LoginThrottleStore, SessionLookup,
    UserDirectory, WorkspaceMember,
};
use domain::common::ports::{Clock, PasswordHasher, RandomSource};
use domain::rate_limit::RateLimitPolicy;
use domain::users::{Role, UserId};
use domain::workspace::{PlanTier, WorkspaceId};

use crate::error::ApiError;

pub mod admitted;
pub mod assistant;
mod errors;
pub mod member;
pub mod v1;

/// What authentication needs, part of [`crate::AppState`].
#[derive(Clone)]
pub struct AuthState {
    /// API keys and login tokens: verification with the rate limit, in one round trip.
    pub credentials: Arc<dyn CredentialStore>,
    /// API key management.
    pub api_keys: Arc<dyn ApiKeyRepository>,
    /// Users and memberships for sign-in.
    pub users: Arc<dyn UserDirectory>,
    /// Failed sign-in counters.
    pub login_throttle: Arc<dyn LoginThrottleStore>,
    /// The settings sessions; `None` until the settings web app provides them (cookies then
    /// authenticate nobody).
    pub sessions: Option<Arc<dyn SessionLookup>>,
    /// argon2id.
    pub hasher: Arc<dyn PasswordHasher>,
    /// Now.
    pub clock: Arc<dyn Clock>,
    /// The OS CSPRNG.
    pub random: Arc<dyn RandomSource>,
    /// Requests per rolling hour per key or token.
    pub rate_limit: RateLimitPolicy,
    /// Token lifetime, throttle and dummy hash.
    pub login: LoginSettings,
    /// API keys recently admitted here, for work started ahead of their checks.
    pub admitted: Arc<admitted::AdmittedKeys>,
    /// The members' rate-limit windows, counted by the assistant endpoints.
    pub member_windows: Arc<dyn domain::rate_limit::MemberWindows>,
    /// The audit log (sign-ins are recorded).
    pub audit: Arc<dyn domain::audit::AuditRepository>,
}

impl AuthState {
    /// The ports of a sign-in (the login API and the sign-in page).
    pub fn login_ports(&self) -> LoginPorts<'_> {
        LoginPorts {
            users: self.users.as_ref(),
            credentials: self.credentials.as_ref(),
            throttle: self.login_throttle.as_ref(),
            hasher: self.hasher.as_ref(),
            clock: self.clock.as_ref(),
            random: self.random.as_ref(),
            audit: self.audit.as_ref(),
        }
    }
}

/// The credential behind a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Principal {
    /// A workspace API key.
    ApiKey {
        /// The key's id.
        key_id: i64,
        /// What it was granted.
        scopes: ScopeSet,
    },
    /// A workspace member, by login token or session cookie.
    User {
        /// The user.
        user_id: UserId,
        /// Their role in the workspace.
        role: Role,
    },
}

/// An authenticated `/v1` caller: its workspace is on `advanced` and the request was admitted by
/// the rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct V1Caller {
    /// The workspace every query of the request is scoped to.
    pub workspace_id: WorkspaceId,
    /// Its plan when the request was checked.
    pub plan: PlanTier,
    /// Key or user.
    pub principal: Principal,
}

impl V1Caller {
    fn from_identity(identity: Identity) -> Self {
        let principal = match identity.owner {
            CredentialOwner::ApiKey { key_id, scopes } => Principal::ApiKey { key_id, scopes },
            CredentialOwner::User { user_id, role } => Principal::User { user_id, role },
        };
        Self { workspace_id: identity.workspace_id, plan: identity.plan, principal }
    }

    /// The caller as the access policy sees it.
    pub fn access(&self) -> Caller {
        Caller {
            workspace_id: self.workspace_id,
            plan: self.plan,
            actor: self.principal.actor(),
            surface: Surface::RestApi,
        }
    }
}

impl Principal {
    /// The actor of the access policy.
    pub fn actor(self) -> Actor {
        match self {
            Principal::ApiKey { key_id, scopes } => Actor::ApiKey { key_id, scopes },
            Principal::User { user_id, role } => Actor::Member { user_id, role },
        }
    }
}

/// A member of the workspace named by the `{workspace_id}` path segment.
#[derive(Debug, Clone, Copy)]
pub struct Member {
    /// The workspace (equal to the path's).
    pub workspace_id: WorkspaceId,
    /// Its plan, for gating.
    pub plan: PlanTier,
    /// The user.
    pub user_id: UserId,
    /// Their role.
    pub role: Role,
}

impl From<WorkspaceMember> for Member {
    fn from(m: WorkspaceMember) -> Self {
        Self { workspace_id: m.workspace_id, plan: m.plan, user_id: m.user_id, role: m.role }
    }
}

impl From<Member> for WorkspaceMember {
    fn from(m: Member) -> Self {
        Self { workspace_id: m.workspace_id, plan: m.plan, user_id: m.user_id, role: m.role }
    }
}

impl Member {
    /// The member as the access policy sees them, on `surface`.
    pub fn access(&self, surface: Surface) -> Caller {
        Caller {
            workspace_id: self.workspace_id,
            plan: self.plan,
            actor: Actor::Member { user_id: self.user_id, role: self.role },
            surface,
        }
    }
}

impl FromRequest for V1Caller {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        if let Some(caller) = req.extensions().get::<V1Caller>() {
            let caller = *caller;
            return Box::pin(async move { Ok(caller) });
        }
        // Outside the `/v1` scope's middleware: check here (and report the window in extensions
        // for whoever adds the headers).
        let req = req.clone();
        Box::pin(async move { v1::resolve_v1_caller(&req).await })
    }
}

impl FromRequest for Member {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        if let Some(member) = req.extensions().get::<Member>() {
            let member = *member;
            return Box::pin(async move { Ok(member) });
        }
        let req = req.clone();
        Box::pin(async move { member::resolve_member(&req).await })
    }
}
