//! The MCP endpoint's 401 names where to sign in (MCP authorization, RFC 9728 section 5.1):
//! `WWW-Authenticate: Bearer resource_metadata="…"`, with the one scope, besides the `realm` and
//! `error` every 401 of wms carries.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderValue, WWW_AUTHENTICATE};
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::web;
use domain::oauth::APP_SCOPE;

use super::issuer;
use super::metadata::resource_metadata_path;
use crate::authentication::member::path_workspace;
use crate::state::AppState;

/// Middleware of the assistant's scope: adds the resource metadata to the MCP endpoint's 401s.
///
/// # Errors
/// Only what the inner service fails with.
pub async fn resource_metadata_hint(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let mut res = next.call(req).await?.map_into_boxed_body();
    if res.status() != StatusCode::UNAUTHORIZED || !res.request().path().ends_with("/co-admin/mcp") {
        return Ok(res);
    }
    let (Some(state), Ok(ws)) =
        (res.request().app_data::<web::Data<AppState>>().cloned(), path_workspace(res.request()))
    else {
        return Ok(res);
    };
    let url = format!("{}{}", issuer(&state), resource_metadata_path(ws.0));
    let rest = res
        .headers()
        .get(WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or(r#"realm="wms""#)
        .to_owned();
    let value = format!(r#"Bearer resource_metadata="{url}", scope="{APP_SCOPE}", {rest}"#);
    if let Ok(v) = HeaderValue::from_str(&value) {
        res.headers_mut().insert(WWW_AUTHENTICATE, v);
    }
    Ok(res)
}
