//! `POST /v1/auth/password-reset`

use actix_web::{web, HttpRequest, HttpResponse};
use domain::accounts::RequestResetError;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

/// Whose password to reset.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordResetBody {
    /// The account's e-mail.
    #[schema(example = "ann@example.com")]
    email: String,
}

impl From<RequestResetError> for ApiError {
    fn from(e: RequestResetError) -> Self {
        match e {
            RequestResetError::Invalid(v) => ApiError::Validation(v),
            RequestResetError::Throttled { retry_after_secs } => {
                ApiError::RateLimited { retry_after: retry_after_secs }
            }
            RequestResetError::Unknown(e) => e.into(),
        }
    }
}

/// Asks for a password reset link by e-mail.
#[utoipa::path(
    post,
    operation_id = "request_password_reset",
    path = "/v1/auth/password-reset",
    tag = "auth",
    security(()),
    request_body = PasswordResetBody,
    responses(
        (status = 202, description = "Accepted, the same for every address: an account with a password gets an e-mail with a one-time link (1 hour) to /password-reset/<token>"),
        (status = 422, description = "A malformed e-mail (`validation_failed`, field `email`)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 429, description = "Too many requests for this address or client (`rate_limited`)", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn request(
    req: HttpRequest,
    state: web::Data<AppState>,
    StrictJson(body): StrictJson<PasswordResetBody>,
) -> Result<HttpResponse, ApiError> {
    state.password_resets.request(&body.email, req.peer_addr().map(|a| a.ip())).await?;
    Ok(HttpResponse::Accepted().finish())
}
