//! The rate limit's answer on every surface (`docs/rate-limit.md`): a member's request counted in
//! the member's window ([`count_in_window`]: the settings API, pages, CSV exports and assistant
//! endpoints; `/v1` counts inside its credential check), a refusal as 429 `rate_limited` with
//! `Retry-After` ([`refused`]), and the `RateLimit`/`X-RateLimit-*` headers on every response
//! of a counted request ([`add_rate_headers`]). Which request is refused is
//! `domain::rate_limit::spread`; the window is counted by `wms_rate_window` in storage.

use actix_web::dev::ServiceResponse;
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{HttpMessage, HttpRequest};
use domain::rate_limit::RateLimitStatus;
use domain::users::UserId;
use domain::workspace::WorkspaceId;

use crate::authentication::v1::app_state;
use crate::error::ApiError;

/// The 429 `rate_limited` problem of a refused request, with its `Retry-After`.
pub fn refused(rate: &RateLimitStatus) -> ApiError {
    ApiError::RateLimited { retry_after: u64::from(rate.retry_after_secs.unwrap_or(1)) }
}

/// Counts a member's request in the member's window and leaves the window in the request's
/// extensions for the rate-limit headers.
///
/// # Errors
/// 429 `rate_limited` (with `Retry-After`) when the window is full; 503 when the database is out of
/// reach.
pub async fn count_in_window(req: &HttpRequest, ws: WorkspaceId, user: UserId) -> Result<(), ApiError> {
    let state = app_state(req)?;
    let auth = &state.auth;
    let status = auth.member_windows.admit(ws, user, auth.rate_limit).await?;
    req.extensions_mut().insert(status);
    if status.is_limited() {
        return Err(refused(&status));
    }
    Ok(())
}

/// Puts the rate-limit headers of `docs/contract.md` on `res` when its request was counted.
pub fn add_rate_headers<B>(res: &mut ServiceResponse<B>) {
    let status = res.request().extensions().get::<RateLimitStatus>().copied();
    if let Some(status) = status {
        let headers = res.headers_mut();
        for (name, value) in status.headers() {
            // Taken over, not copied: the string's buffer becomes the header's.
            if let Ok(value) = HeaderValue::try_from(value) {
                headers.insert(HeaderName::from_static(name), value);
            }
        }
    }
}
