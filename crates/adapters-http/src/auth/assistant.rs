//! Callers of the assistant's endpoints (`/workspaces/{workspace_id}/co-admin/…`): a member of the
//! path's workspace (login token or settings session) or an API key of it; the access policy then
//! decides ([`crate::access`]: `assistant:read` for keys).

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use domain::access::Caller;
use domain::auth::{authenticate_assistant, MemberCredential};
use domain::workspace::WorkspaceId;

use super::v1::{app_state, authorization};
use super::SESSION_COOKIE;
use crate::error::ApiError;

/// An authenticated caller of the assistant's endpoints, admitted by the policy.
#[derive(Debug, Clone, Copy)]
pub struct AssistantCaller(pub Caller);

/// Authenticates the caller of the path's workspace and leaves it in the request's extensions.
///
/// # Errors
/// 401 without valid credentials, 404 `not_found` for a non-member or another workspace's key.
pub async fn authenticate(req: &HttpRequest) -> Result<Caller, ApiError> {
    let not_found = || ApiError::NotFound("workspace not found".into());
    let ws = req
        .match_info()
        .get("workspace_id")
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|id| *id > 0)
        .map(WorkspaceId)
        .ok_or_else(not_found)?;
    let state = app_state(req)?;
    let header = authorization(req)?;
    let cookie = req.cookie(SESSION_COOKIE);
    let credential = match (&header, &cookie) {
        (Some(h), _) => MemberCredential::Authorization(h),
        (None, Some(c)) => MemberCredential::Session(c.value()),
        (None, None) => MemberCredential::None,
    };
    let auth = &state.auth;
    let caller = authenticate_assistant(auth.credentials.as_ref(), auth.sessions.as_deref(), credential, ws).await?;
    // As on the settings API: a state change made with the cookie carries the anti-forgery token.
    if let MemberCredential::Session(value) = credential {
        if !crate::pages::session::csrf_header_ok(req, value) {
            return Err(ApiError::Forbidden(
                "send the session's anti-forgery token in the X-CSRF-Token header (state changes with the session cookie)"
                    .into(),
            ));
        }
    }
    req.extensions_mut().insert(AssistantCaller(caller));
    Ok(caller)
}

impl FromRequest for AssistantCaller {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        let found = req.extensions().get::<AssistantCaller>().copied();
        Box::pin(async move {
            found.ok_or_else(|| ApiError::Internal(anyhow::anyhow!("an assistant route without its access entry")))
        })
    }
}
