//! Answers for paths and methods that no route serves.

use actix_web::{HttpRequest, HttpResponse};

use crate::error::ApiError;

/// 404 problem+json for unknown paths.
///
/// # Errors
/// Always [`ApiError::NotFound`].
pub async fn not_found(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound(format!("no resource at {}", req.path())))
}

/// 405 problem+json for a known path with an unsupported method.
///
/// # Errors
/// Always [`ApiError::MethodNotAllowed`].
pub async fn method_not_allowed() -> Result<HttpResponse, ApiError> {
    Err(ApiError::MethodNotAllowed)
}
