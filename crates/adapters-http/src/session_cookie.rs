//! The settings session cookie, shared by the two sides that use it: the pages set it and check
//! their forms' anti-forgery token ([`crate::pages::session`]); the member authentication of the
//! JSON settings API and the assistant reads it ([`crate::authentication::member`],
//! [`crate::authentication::assistant`]). It lives apart from both so neither imports the other.

use actix_web::http::header::ORIGIN;
use actix_web::{web, HttpRequest};
use domain::sessions::SessionSecret;

use crate::handlers::assistant::origin_of;
use crate::state::AppState;

/// The settings web app's session cookie (its sessions belong to the settings work, which plugs
/// them in through [`crate::authentication::AuthState::sessions`]).
pub const SESSION_COOKIE: &str = "wms_session";

/// For the JSON settings API and the assistant authenticated by the session cookie: safe methods
/// pass; a state change passes with `X-CSRF-Token` holding the session's token, or without it on
/// positive evidence that no other site made it:
/// - the browser says it comes from this very origin (`Sec-Fetch-Site: same-origin`, or an
///   `Origin` equal to this site's, scheme included: [`is_same_origin`]); or
/// - nothing at all names a site (no `Origin`, no `Sec-Fetch-Site`: a script or client holding the
///   cookie) and the body is JSON (`Content-Type: application/json`), which no form of another
///   site can send and no other site's script can send without a preflight that is never
///   answered.
///
/// Anything else is refused: another site (a sibling subdomain too, which `SameSite=Lax` treats
/// as the same site), and a request without JSON and without any origin (a form a very old
/// browser posts). The pages' forms keep their own tokens (`pages::guard`).
pub fn csrf_header_ok(req: &HttpRequest, cookie_value: &str) -> bool {
    if matches!(
        *req.method(),
        actix_web::http::Method::GET | actix_web::http::Method::HEAD | actix_web::http::Method::OPTIONS
    ) {
        return true;
    }
    let presented = req.headers().get("x-csrf-token").and_then(|v| v.to_str().ok()).unwrap_or("");
    if SessionSecret::parse(cookie_value).is_some_and(|s| s.csrf_matches(presented)) {
        return true;
    }
    let fetch_site = req.headers().get("sec-fetch-site").and_then(|v| v.to_str().ok());
    match (fetch_site, req.headers().get(ORIGIN)) {
        (Some(site), _) => site.eq_ignore_ascii_case("same-origin"),
        (None, None) => is_json(req),
        (None, Some(_)) => is_same_origin(req),
    }
}

/// Whether the request's body is declared JSON.
fn is_json(req: &HttpRequest) -> bool {
    let ct = req.headers().get(actix_web::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let essence = ct.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
}

/// Whether the request's `Origin` is exactly this site's (scheme, host and port): the configured
/// public URL's, else the one the request was made to (`X-Forwarded-Proto`/`Forwarded` as actix
/// reads them). A request without `Origin` has no such evidence.
pub fn is_same_origin(req: &HttpRequest) -> bool {
    let Some(origin) = req.headers().get(ORIGIN).and_then(|v| v.to_str().ok()) else { return false };
    let origin = origin.trim().to_ascii_lowercase();
    let public = req.app_data::<web::Data<AppState>>().and_then(|s| s.pages.public_url.as_deref().and_then(origin_of));
    if let Some(public) = public {
        return public == origin;
    }
    let info = req.connection_info();
    origin == format!("{}://{}", info.scheme(), info.host()).to_ascii_lowercase()
}

/// Whether the browser says the request comes from another site: `Sec-Fetch-Site: cross-site`,
/// or an `Origin` whose host is neither this request's host nor the configured public URL's.
/// A request without either header is not from a browser (or from one too old to send them).
pub fn is_cross_site(req: &HttpRequest) -> bool {
    let fetch_site = req.headers().get("sec-fetch-site").and_then(|v| v.to_str().ok()).unwrap_or("");
    if fetch_site.eq_ignore_ascii_case("cross-site") {
        return true;
    }
    let Some(origin) = req.headers().get(ORIGIN) else { return false };
    let origin = origin.to_str().unwrap_or("null").trim().to_ascii_lowercase();
    if origin == "null" {
        return true;
    }
    let public = req.app_data::<web::Data<AppState>>().and_then(|s| s.pages.public_url.as_deref().and_then(origin_of));
    if public.as_deref() == Some(origin.as_str()) {
        return false;
    }
    // The scheme is not compared: behind a TLS-terminating proxy the server sees plain HTTP.
    let host = req.connection_info().host().to_ascii_lowercase();
    origin.split_once("://").map(|(_, h)| h) != Some(host.as_str())
}
