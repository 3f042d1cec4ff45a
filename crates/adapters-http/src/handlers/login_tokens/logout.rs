//! `POST /v1/auth/logout`

use actix_web::{web, HttpMessage, HttpRequest, HttpResponse};

use crate::authentication::v1::authorization;
use crate::error::ApiError;
use crate::state::AppState;

/// Revokes the login token the request is authenticated with, on any plan. Counted against the
/// token's rate limit, but a signed-out token is revoked even when the limit is reached.
#[utoipa::path(
    post,
    path = "/v1/auth/logout",
    tag = "auth",
    responses(
        (status = 204, description = "The token is revoked"),
        (status = 403, description = "API keys cannot sign out (`forbidden`)", body = crate::error::Problem,
         content_type = "application/problem+json"),
    )
)]
pub async fn logout(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let auth = &state.auth;
    let header = authorization(&req)?;
    match domain::auth::logout(auth.credentials.as_ref(), auth.clock.as_ref(), header.as_deref(), auth.rate_limit).await
    {
        Ok(rate) => {
            if let Some(rate) = rate {
                req.extensions_mut().insert(rate);
            }
            Ok(HttpResponse::NoContent().finish())
        }
        Err(e) => {
            if let Some(rate) = e.rate() {
                req.extensions_mut().insert(*rate);
            }
            Err(e.into())
        }
    }
}
