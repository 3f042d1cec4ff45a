//! Callers of the assistant's endpoints (`/workspaces/{workspace_id}/co-admin/…`): a member of the
//! path's workspace (login token or settings session) or an API key of it; the access policy then
//! decides ([`crate::access`]: `assistant:read` for keys).

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpRequest};
use domain::access::Caller;

use super::member::Presented;
use super::v1::app_state;
use super::Authenticated;
use crate::error::ApiError;
use crate::rate_limit::{add_rate_headers, count_in_window};

/// Authenticates the caller of the path's workspace and leaves it in the request (for
/// [`Authenticated`]).
///
/// # Errors
/// 401 without valid credentials, 404 `not_found` for a non-member or another workspace's key.
pub async fn resolve_assistant_caller(req: &HttpRequest) -> Result<Caller, ApiError> {
    let presented = Presented::of(req)?;
    let state = app_state(req)?;
    let identity = state.auth.identity(&state.oauth);
    if let Some(token) = presented.app_token() {
        // An app's OAuth token: the grant decides (`docs/oauth.md`), then the member's window.
        let caller = identity.app(&token, presented.workspace).await?;
        if let Some((user_id, _)) = caller.member() {
            count_in_window(req, caller.workspace_id, user_id).await?;
        }
        Authenticated::record(req, caller);
        return Ok(caller);
    }
    let (credential, ws) = (presented.credential(), presented.workspace);
    let result = identity.assistant(credential, ws, req.peer_addr().map(|a| a.ip())).await;
    if let Err(domain::auth::MemberAuthError::Limited { rate }) = &result {
        req.extensions_mut().insert(*rate);
    }
    let admission = result?;
    if let Some(rate) = admission.rate {
        req.extensions_mut().insert(rate);
    }
    let caller = admission.caller;
    // As on the settings API: a state change made with the cookie carries the anti-forgery token.
    presented.check_forgery(req)?;
    // A member's request counts against the member's window, shared with their /v1 tokens
    // (docs/contract.md, "Abuse limits").
    if let Some((user_id, _)) = caller.member() {
        count_in_window(req, caller.workspace_id, user_id).await?;
    }
    Authenticated::record(req, caller);
    Ok(caller)
}

/// Middleware for the assistant's scope: the rate-limit headers on every response of a counted
/// request, success or error.
///
/// # Errors
/// Only what the inner service fails with.
pub async fn rate_headers(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let mut res = next.call(req).await?.map_into_boxed_body();
    add_rate_headers(&mut res);
    Ok(res)
}
