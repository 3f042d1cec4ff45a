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

/// 405 problem+json for a known path with an unsupported method, with `Allow` naming the
/// methods it has (RFC 9110 section 15.5.6).
pub fn method_not_allowed(allow: &str) -> HttpResponse {
    let mut res = actix_web::ResponseError::error_response(&ApiError::MethodNotAllowed);
    if let Ok(value) = actix_web::http::header::HeaderValue::from_str(allow) {
        res.headers_mut().insert(actix_web::http::header::ALLOW, value);
    }
    res
}
