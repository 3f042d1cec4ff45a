//! `/v1` authentication: the middleware that authenticates and rate-limits every request of the
//! scope before its handler runs, and puts the rate-limit headers on every response it produced
//! for an authenticated caller, success or error.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue, AUTHORIZATION};
use actix_web::middleware::Next;
use actix_web::{web, HttpMessage, HttpRequest};
use domain::auth::Requirements;
use domain::rate_limit::RateLimitStatus;
use domain::workspace::PlanTier;

use super::V1Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// `/v1` paths that the middleware lets through without credentials: sign-in, the API document,
/// and sign-out (which checks its token itself, because it works on every plan).
pub const PUBLIC_PATHS: [&str; 3] = ["/v1/auth/login", "/v1/auth/logout", "/v1/openapi.json"];

/// Middleware for the `/v1` scope.
///
/// # Errors
/// Only what the inner service fails with; refusals are responses.
pub async fn authenticate_v1(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    if !PUBLIC_PATHS.contains(&req.path()) {
        if let Err(e) = authenticate(req.request()).await {
            let mut res = req.error_response(e);
            add_rate_headers(&mut res);
            return Ok(res);
        }
    }
    let mut res = next.call(req).await?.map_into_boxed_body();
    add_rate_headers(&mut res);
    Ok(res)
}

/// Authenticates a `/v1` request (an `advanced` workspace's key or login token) and counts it;
/// leaves the [`V1Caller`] and the window in the request's extensions.
///
/// # Errors
/// The 401, 403 and 429 problems of `decisions.md`.
pub async fn authenticate(req: &HttpRequest) -> Result<V1Caller, ApiError> {
    let state = app_state(req)?;
    let header = authorization(req)?;
    let needs = Requirements { plan: Some(PlanTier::Advanced), rate_limit: Some(state.auth.rate_limit) };
    match domain::auth::authenticate(state.auth.credentials.as_ref(), header.as_deref(), &needs).await {
        Ok(ok) => {
            let caller = V1Caller::from_identity(ok.identity);
            let mut ext = req.extensions_mut();
            ext.insert(caller);
            if let Some(rate) = ok.rate {
                ext.insert(rate);
            }
            Ok(caller)
        }
        Err(e) => {
            if let Some(rate) = e.rate() {
                req.extensions_mut().insert(*rate);
            }
            Err(e.into())
        }
    }
}

/// The handlers' state.
///
/// # Errors
/// 500 when the application was built without it (a wiring bug).
pub fn app_state(req: &HttpRequest) -> Result<web::Data<AppState>, ApiError> {
    req.app_data::<web::Data<AppState>>()
        .cloned()
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("AppState is not registered")))
}

/// The value of the one `Authorization` header, if any. Query strings are never looked at: a
/// credential there would end up in logs and browser histories.
///
/// # Errors
/// 401 `invalid_token` for several `Authorization` headers.
pub fn authorization(req: &HttpRequest) -> Result<Option<Vec<u8>>, ApiError> {
    let mut values = req.headers().get_all(AUTHORIZATION);
    let first = values.next().map(|v| v.as_bytes().to_vec());
    if values.next().is_some() {
        return Err(ApiError::InvalidToken("send exactly one Authorization header".into()));
    }
    Ok(first)
}

/// Puts the rate-limit headers of `decisions.md` on `res` when its request was counted.
pub fn add_rate_headers<B>(res: &mut ServiceResponse<B>) {
    let status = res.request().extensions().get::<RateLimitStatus>().copied();
    if let Some(status) = status {
        let headers = res.headers_mut();
        for (name, value) in status.headers() {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(HeaderName::from_static(name), value);
            }
        }
    }
}
