//! Who is calling. Two extractors cover every protected route:
//! - [`V1Caller`] for `/v1`: an API key or a user token, on an `advanced` workspace, rate-limited.
//! - [`Member`] for `/api/workspaces/{workspace_id}/…` and `/workspaces/{workspace_id}/co-admin/…`:
//!   a user token or the settings session cookie of a member of that workspace. API keys are not
//!   member credentials (403 `forbidden`); a non-member gets 404 `not_found`.
//!
//! SEAM: the types below are the contract other handlers rely on. The credential checks
//! themselves are implemented by the authentication work (issue 3); until then both extractors
//! refuse every request with 401.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use domain::users::{Role, UserId};
use domain::workspace::{PlanTier, WorkspaceId};

use crate::error::ApiError;

/// The credential behind a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Principal {
    /// A workspace API key.
    ApiKey {
        /// The key's id.
        key_id: i64,
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
#[derive(Debug, Clone, Copy)]
pub struct V1Caller {
    /// The workspace every query of the request is scoped to.
    pub workspace_id: WorkspaceId,
    /// Key or user.
    pub principal: Principal,
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

impl Member {
    /// Only admins may continue.
    ///
    /// # Errors
    /// 403 `forbidden` for agents.
    pub fn require_admin(&self) -> Result<(), ApiError> {
        match self.role {
            Role::Admin => Ok(()),
            Role::Agent => Err(ApiError::Forbidden("only workspace admins can do this".into())),
        }
    }

    /// The workspace's plan must include `required`.
    ///
    /// # Errors
    /// 403 `plan_required`.
    pub fn require_plan(&self, required: PlanTier) -> Result<(), ApiError> {
        if self.plan.includes(required) {
            Ok(())
        } else {
            Err(ApiError::PlanRequired { required: required.to_string(), current: self.plan.to_string() })
        }
    }
}

impl FromRequest for V1Caller {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(_req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        Box::pin(async { Err(ApiError::Unauthenticated) })
    }
}

impl FromRequest for Member {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(_req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        Box::pin(async { Err(ApiError::Unauthenticated) })
    }
}
