//! The settings session cookie, shared by the two sides that use it: the pages set it and check
//! their forms' anti-forgery token ([`crate::pages::session`]); the member authentication of the
//! JSON settings API and the assistant reads it ([`crate::authentication::member`],
//! [`crate::authentication::assistant`]). It lives apart from both so neither imports the other.

use actix_web::HttpRequest;
use domain::sessions::SessionSecret;

/// The settings web app's session cookie (its sessions belong to the settings work, which plugs
/// them in through [`crate::authentication::AuthState::sessions`]).
pub const SESSION_COOKIE: &str = "wms_session";

/// For the JSON settings API authenticated by the session cookie: safe methods pass; others need
/// `X-CSRF-Token` with the session's token.
pub fn csrf_header_ok(req: &HttpRequest, cookie_value: &str) -> bool {
    if matches!(
        *req.method(),
        actix_web::http::Method::GET | actix_web::http::Method::HEAD | actix_web::http::Method::OPTIONS
    ) {
        return true;
    }
    let presented = req.headers().get("x-csrf-token").and_then(|v| v.to_str().ok()).unwrap_or("");
    SessionSecret::parse(cookie_value).is_some_and(|s| s.csrf_matches(presented))
}
