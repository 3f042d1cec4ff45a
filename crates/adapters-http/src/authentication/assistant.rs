//! Callers of the assistant's endpoints (`/workspaces/{workspace_id}/co-admin/…`): a member of the
//! path's workspace (login token or settings session) or an API key of it; the access policy then
//! decides ([`crate::access`]: `assistant:read` for keys).

use std::future::Future;
use std::pin::Pin;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use domain::access::{Actor, Caller};
use domain::auth::authenticate_assistant;

use super::member::Presented;
use super::v1::app_state;
use crate::error::ApiError;
use crate::rate_limit::{add_rate_headers, count_in_window};

/// An authenticated caller of the assistant's endpoints, admitted by the policy.
#[derive(Debug, Clone, Copy)]
pub struct AssistantCaller(pub Caller);

/// Authenticates the caller of the path's workspace and leaves it in the request's extensions.
///
/// # Errors
/// 401 without valid credentials, 404 `not_found` for a non-member or another workspace's key.
pub async fn resolve_assistant_caller(req: &HttpRequest) -> Result<Caller, ApiError> {
    let presented = Presented::of(req)?;
    if let Some(token) = presented.app_token() {
        // An app's OAuth token: the grant decides (`docs/oauth.md`), then the member's window.
        let caller = app_state(req)?.oauth.admit(&token, presented.workspace).await?;
        if let Some((user_id, _)) = caller.member() {
            count_in_window(req, caller.workspace_id, user_id).await?;
        }
        req.extensions_mut().insert(AssistantCaller(caller));
        return Ok(caller);
    }
    let auth = &app_state(req)?.auth;
    let (credential, ws) = (presented.credential(), presented.workspace);
    let sessions = auth.sessions.as_deref();
    let client = req.peer_addr().map(|a| a.ip());
    let result =
        authenticate_assistant(auth.credentials.as_ref(), sessions, credential, ws, Some(auth.rate_limit), client)
            .await;
    if let Err(domain::auth::MemberAuthError::Limited { rate }) = &result {
        req.extensions_mut().insert(*rate);
    }
    let (caller, key_rate) = result?;
    if let Some(rate) = key_rate {
        req.extensions_mut().insert(rate);
    }
    // As on the settings API: a state change made with the cookie carries the anti-forgery token.
    presented.check_forgery(req)?;
    // A member's request counts against the member's window, shared with their /v1 tokens
    // (docs/contract.md, "Abuse limits").
    if let Actor::Member { user_id, .. } = caller.actor {
        count_in_window(req, caller.workspace_id, user_id).await?;
    }
    req.extensions_mut().insert(AssistantCaller(caller));
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
