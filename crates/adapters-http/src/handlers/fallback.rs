//! Answers for paths and methods that no route serves.

use actix_web::{HttpRequest, HttpResponse};

use crate::error::ApiError;

/// The paths of the settings pages: a browser that mistypes one gets the pages' own 404 page.
const PAGE_AREAS: [&str; 2] = ["/settings/", "/analytics"];

/// 404 for unknown paths: problem+json, or the pages' HTML error page for a browser asking for a
/// page of the settings (`Accept: text/html`).
pub async fn not_found(req: HttpRequest) -> HttpResponse {
    let wants_html = req
        .headers()
        .get(actix_web::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/html"));
    if wants_html && PAGE_AREAS.iter().any(|p| req.path().starts_with(p)) {
        let missing = crate::pages::PageError::NotFound("There is no such page.".into());
        let mut res = actix_web::ResponseError::error_response(&missing);
        crate::pages::guard::harden(res.headers_mut());
        return res;
    }
    actix_web::ResponseError::error_response(&ApiError::NotFound(format!("no resource at {}", req.path())))
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
