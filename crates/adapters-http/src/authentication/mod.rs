//! Who is calling. Every credential becomes the domain's one [`Caller`] through
//! [`domain::identity::IdentityService`] ([`AuthState::identity`]); each surface only reads its
//! credential and leaves the caller in the request for [`Authenticated`]:
//! - `/v1` ([`v1::authenticate_v1`]): an API key or a user token, on an `advanced` workspace,
//!   rate-limited.
//! - the settings API, `/api/workspaces/{workspace_id}/…` ([`member::authenticate_members`]): a
//!   user token or the settings session cookie of a member of that workspace. API keys are not
//!   member credentials (403 `forbidden`); a non-member gets 404 `not_found`.
//! - the assistant's endpoints, `/workspaces/{workspace_id}/co-admin/…`
//!   ([`assistant::resolve_assistant_caller`], from [`crate::access`]): a member, a key of the
//!   workspace, or an app's OAuth token.
//! - the settings pages: the session's member, read by [`crate::pages::session::signed`].
//!
//! actix polls all of a handler's extractors at once and answers with the first error, so an
//! extractor that queries the database could lose the race to, say, a malformed query string (a
//! 422 to an unauthenticated caller). Hence the credential checks run before the handler, in
//! middleware or the route's access check, and the extractor only reads their result.

use std::future::{ready, Ready};
use std::ops::Deref;
use std::sync::Arc;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use domain::access::Caller;
use domain::api_keys::ApiKeyRepository;
use domain::auth::{CredentialStore, LoginPorts, LoginSettings, LoginThrottleStore, SessionLookup, UserDirectory};
use domain::common::ports::{Clock, PasswordHasher, RandomSource};
use domain::identity::IdentityService;
use domain::oauth::OAuthService;
use domain::rate_limit::RateLimitPolicy;

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

    /// The identity path over these ports, with `apps` for the OAuth tokens of connected apps.
    pub fn identity<'a>(&'a self, apps: &'a OAuthService) -> IdentityService<'a> {
        IdentityService {
            credentials: self.credentials.as_ref(),
            sessions: self.sessions.as_deref(),
            apps,
            rate_limit: self.rate_limit,
        }
    }
}

/// The request's [`Caller`], as its surface's authentication left it in the request: the one
/// caller of the domain, whichever credential and surface (`/v1`, the settings API, the assistant's
/// endpoints and MCP). A newtype only because actix's `FromRequest` cannot be implemented here for
/// the domain's type (the orphan rule): it adds nothing to the caller and derefs to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Authenticated(pub Caller);

impl Deref for Authenticated {
    type Target = Caller;

    fn deref(&self) -> &Caller {
        &self.0
    }
}

impl Authenticated {
    /// Leaves `caller` in `req` for the handler's extractor (the surfaces' authentication).
    pub(crate) fn record(req: &HttpRequest, caller: Caller) {
        req.extensions_mut().insert(Authenticated(caller));
    }

    /// The caller left in `req`, if its surface authenticated one.
    pub(crate) fn of(req: &HttpRequest) -> Option<Caller> {
        req.extensions().get::<Authenticated>().map(|a| a.0)
    }

    /// The caller of a route that reads one. Every protected route is behind its surface's
    /// authentication (`routes.rs`): a route that is not is a wiring bug, never a guest.
    ///
    /// # Errors
    /// 500 for such a route.
    pub(crate) fn required(req: &HttpRequest) -> Result<Caller, ApiError> {
        Self::of(req).ok_or_else(|| {
            ApiError::Internal(anyhow::anyhow!("a route reads its caller outside an authenticated scope"))
        })
    }
}

impl FromRequest for Authenticated {
    type Error = ApiError;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        ready(Self::required(req).map(Authenticated))
    }
}
