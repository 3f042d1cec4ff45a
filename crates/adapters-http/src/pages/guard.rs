//! Middleware of every page: security headers, and no state change from another site.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue, SET_COOKIE};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::web;

use super::session::FLASH_COOKIE;
use super::PageError;
use crate::state::AppState;

/// Only this server: no script, style, font, image or frame from anywhere else can load, which
/// also makes "the pages work offline" something the browser enforces. Inline scripts and styles
/// are refused too, so injected markup cannot run.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const HEADERS: [(&str, &str); 5] = [
    ("content-security-policy", CSP),
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "same-origin"),
    ("cross-origin-opener-policy", "same-origin"),
];

/// Refuses cross-site state-changing requests and adds the security headers to every answer.
///
/// # Errors
/// Only what the inner service fails with; refusals are responses.
pub async fn guard(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let safe = matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    let mut res = if !safe && crate::session_cookie::is_cross_site(req.request()) {
        req.error_response(PageError::Csrf)
    } else {
        next.call(req).await?.map_into_boxed_body()
    };
    clear_shown_flash(&mut res);
    harden(res.headers_mut());
    Ok(res)
}

/// Adds the pages' security headers (CSP, framing, sniffing, referrer, opener) to `headers`: every
/// page's answer gets them here, and a page answered outside this middleware (the HTML 404 of a
/// mistyped settings path) gets them from its handler.
pub fn harden(headers: &mut actix_web::http::header::HeaderMap) {
    for (name, value) in HEADERS {
        headers.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
    }
}

/// A flash message is shown once: the page that displayed it deletes its cookie (unless the
/// response leaves a new message).
fn clear_shown_flash(res: &mut ServiceResponse<BoxBody>) {
    let had = res.request().cookie(FLASH_COOKIE).is_some();
    let shown = res.status().is_success() || res.status().is_client_error();
    let sets_new = res.headers().get_all(SET_COOKIE).any(|v| v.as_bytes().starts_with(FLASH_COOKIE.as_bytes()));
    if had && shown && !sets_new {
        let secure = res.request().app_data::<web::Data<AppState>>().is_none_or(|s| s.pages.secure_cookies);
        let mut c =
            actix_web::cookie::Cookie::build(FLASH_COOKIE, "").path("/").http_only(true).secure(secure).finish();
        c.make_removal();
        if let Ok(v) = HeaderValue::from_str(&c.to_string()) {
            res.headers_mut().append(SET_COOKIE, v);
        }
    }
}
