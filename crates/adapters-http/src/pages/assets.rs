//! The stylesheet, script and icon of the pages, compiled into the binary (`include_str!`): the
//! pages load nothing from anywhere else. Each path carries a content hash so that browsers may
//! cache it for good and still get a new version after an upgrade.

use std::sync::OnceLock;

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::HttpResponse;

const CSS: &str = include_str!("assets/app.css");
const JS: &str = include_str!("assets/app.js");
const ICON: &str = include_str!("assets/icon.svg");

/// The stylesheet's path.
pub const CSS_PATH: &str = "/assets/app.css";
/// The script's path.
pub const JS_PATH: &str = "/assets/app.js";
/// The icon's path.
pub const ICON_PATH: &str = "/assets/icon.svg";

fn version() -> &'static str {
    static V: OnceLock<String> = OnceLock::new();
    V.get_or_init(|| format!("{:08x}", crc32fast_like(CSS) ^ crc32fast_like(JS).rotate_left(7)))
}

/// A tiny FNV-1a hash: only to tell versions apart in the `ETag`.
fn crc32fast_like(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5_u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

fn asset(body: &'static str, content_type: &str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header(CacheControl(vec![CacheDirective::Public, CacheDirective::MaxAge(3600)]))
        .insert_header(("etag", format!("\"{}\"", version())))
        .body(body)
}

/// `GET /assets/app.css`
pub async fn css() -> HttpResponse {
    asset(CSS, "text/css; charset=utf-8")
}

/// `GET /assets/app.js`
pub async fn js() -> HttpResponse {
    asset(JS, "text/javascript; charset=utf-8")
}

/// `GET /assets/icon.svg`
pub async fn icon() -> HttpResponse {
    asset(ICON, "image/svg+xml")
}
