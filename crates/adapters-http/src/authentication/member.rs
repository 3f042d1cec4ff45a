//! Member authentication for workspace-scoped endpoints (`/api/workspaces/{workspace_id}/…`,
//! `/workspaces/{workspace_id}/co-admin/…`): a login token bound to that workspace, or the
//! settings session cookie.
//!
//! Every request of a member counts in the member's hourly window, the one their `/v1` tokens
//! and the assistant endpoints count in too ([`crate::rate_limit::count_in_window`]): the settings API here, the
//! settings pages and CSV exports in [`crate::access`].

use actix_web::body::{BoxBody, MessageBody};
use actix_web::cookie::Cookie;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::HttpRequest;
use domain::access::{Caller, Surface};
use domain::auth::MemberCredential;
use domain::workspace::WorkspaceId;

use super::v1::{app_state, authorization};
use super::Authenticated;
use crate::error::ApiError;
use crate::rate_limit::{add_rate_headers, count_in_window};
use crate::session_cookie::{csrf_header_ok, SESSION_COOKIE};

/// Middleware for a scope whose path has a `{workspace_id}` segment: every request is from an
/// active member of that workspace before its handler runs.
///
/// # Errors
/// Only what the inner service fails with; refusals are responses.
pub async fn authenticate_members(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    if let Err(e) = resolve_member(req.request()).await {
        let mut res = req.error_response(e);
        add_rate_headers(&mut res);
        return Ok(res);
    }
    let mut res = next.call(req).await?.map_into_boxed_body();
    add_rate_headers(&mut res);
    Ok(res)
}

/// The `{workspace_id}` path segment; anything but a positive integer is a workspace not found.
///
/// # Errors
/// 404 `not_found`.
pub fn path_workspace(req: &HttpRequest) -> Result<WorkspaceId, ApiError> {
    req.match_info()
        .get("workspace_id")
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|id| *id > 0)
        .map(WorkspaceId)
        .ok_or_else(|| ApiError::NotFound("workspace not found".into()))
}

/// What a workspace-scoped request presents: the path's workspace, and its `Authorization` header
/// or the settings session cookie.
pub struct Presented {
    /// The `{workspace_id}` path segment.
    pub workspace: WorkspaceId,
    header: Option<Vec<u8>>,
    cookie: Option<Cookie<'static>>,
}

impl Presented {
    /// Reads them from `req`.
    ///
    /// # Errors
    /// 404 `not_found` for a path segment that is no workspace id, 401 `invalid_token` for several
    /// `Authorization` headers.
    pub fn of(req: &HttpRequest) -> Result<Self, ApiError> {
        let workspace = path_workspace(req)?;
        Ok(Self { workspace, header: authorization(req)?, cookie: req.cookie(SESSION_COOKIE) })
    }

    /// The credential: an `Authorization` header wins over the cookie.
    pub fn credential(&self) -> MemberCredential<'_> {
        match (&self.header, &self.cookie) {
            (Some(h), _) => MemberCredential::Authorization(h),
            (None, Some(c)) => MemberCredential::Session(c.value()),
            (None, None) => MemberCredential::None,
        }
    }

    /// The `Authorization` header's token when it is an app's OAuth token (`wmso_`, `wmsr_`).
    pub fn app_token(&self) -> Option<domain::auth::PresentedToken> {
        let header = self.header.as_deref()?;
        let token = domain::auth::bearer_token(header).ok().and_then(|t| domain::auth::parse(t).ok())?;
        token.kind.is_app().then_some(token)
    }

    /// A cookie is sent by the browser on its own: a state change made with it must also carry
    /// the session's anti-forgery token (a bearer token is not sent on its own, so needs none).
    /// Checked once the credential is known to be good.
    ///
    /// # Errors
    /// 403 `forbidden` for a state change with the cookie and without the token.
    pub fn check_forgery(&self, req: &HttpRequest) -> Result<(), ApiError> {
        match self.credential() {
            MemberCredential::Session(value) if !csrf_header_ok(req, value) => Err(ApiError::Forbidden(
                "send the session's anti-forgery token in the X-CSRF-Token header (state changes with the session cookie)"
                    .into(),
            )),
            _ => Ok(()),
        }
    }
}

/// Authenticates the member of the path's workspace on the settings API and leaves the
/// [`Caller`] in the request (for [`Authenticated`]). An `Authorization` header wins over the
/// cookie.
///
/// # Errors
/// 401 without valid credentials, 403 `forbidden` for an API key, 404 `not_found` when the
/// caller is not an active member of the workspace (or the id is not one).
pub async fn resolve_member(req: &HttpRequest) -> Result<Caller, ApiError> {
    let presented = Presented::of(req)?;
    let state = app_state(req)?;
    let (credential, ws) = (presented.credential(), presented.workspace);
    let caller = state.auth.identity(&state.oauth).member(credential, ws, Surface::Settings).await?;
    presented.check_forgery(req)?;
    if let Some((user, _)) = caller.member() {
        count_in_window(req, caller.workspace_id, user).await?;
    }
    Authenticated::record(req, caller);
    Ok(caller)
}
