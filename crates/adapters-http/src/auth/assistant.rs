//! The assistant endpoints' rate limit (`/workspaces/{workspace_id}/co-admin/…`): every request of
//! a member counts against the member's window, the one their login tokens count against on
//! `/v1`, with the same `rate_limit.requests_per_hour` (decisions.md, "Abuse limits"). Before,
//! member credentials had no limit at all there.

use std::future::Future;
use std::pin::Pin;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{FromRequest, HttpMessage, HttpRequest};

use super::v1::{add_rate_headers, app_state};
use super::Member;
use crate::error::ApiError;

/// A member of the path's workspace whose request was counted and admitted by the member's
/// rate-limit window: what the assistant's handlers take instead of [`Member`].
#[derive(Debug, Clone, Copy)]
pub struct CountedMember(pub Member);

/// Counts `member`'s request; leaves the window in the request's extensions for the headers.
///
/// # Errors
/// 429 `rate_limited` (with `Retry-After`) when the window is full; 503 when the database is out of
/// reach.
pub async fn count(req: &HttpRequest, member: Member) -> Result<(), ApiError> {
    let state = app_state(req)?;
    let auth = &state.auth;
    let status = auth.member_windows.admit(member.workspace_id, member.user_id, auth.rate_limit).await?;
    req.extensions_mut().insert(status);
    match status.retry_after_secs {
        Some(retry_after) => Err(ApiError::RateLimited { retry_after: u64::from(retry_after) }),
        None => Ok(()),
    }
}

impl FromRequest for CountedMember {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let member = Member::from_request(req, payload);
        let req = req.clone();
        Box::pin(async move {
            let member = member.await?;
            count(&req, member).await?;
            Ok(CountedMember(member))
        })
    }
}

/// Middleware for the assistant's scope: the rate-limit headers on every response of a counted
/// request, success or error. It authenticates nothing itself (the handlers do, so that methods a
/// path does not support still answer 405).
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
