//! `/workspaces/{workspace_id}/co-admin/mcp`: the tools over MCP's streamable HTTP transport.
//! POST carries JSON-RPC and is answered with JSON; there is no server-sent event stream and no
//! session, so GET and DELETE answer 405.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use super::AssistantState;
use crate::authentication::Authenticated;
use crate::error::ApiError;
use crate::extract::RawBody;
use crate::mcp::{handle, supports, Reply};
use crate::state::AppState;

/// Answers one POST of JSON-RPC.
///
/// # Errors
/// 403 for a foreign `Origin`; the member check's 401/403/404.
pub async fn post(
    req: HttpRequest,
    Authenticated(caller): Authenticated,
    state: web::Data<AppState>,
    RawBody(body): RawBody,
) -> Result<HttpResponse, ApiError> {
    // MCP transport security: a web page must not reach the endpoint through the user's browser
    // (DNS rebinding). Clients that are not browsers send no Origin.
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        if !origin_allowed(&state.assistant, origin) {
            return Err(ApiError::Forbidden("this Origin may not call the MCP endpoint".into()));
        }
    }
    if let Some(v) = req.headers().get("mcp-protocol-version").and_then(|v| v.to_str().ok()) {
        if !supports(v.trim()) {
            return Ok(bad_request(serde_json::json!({
                "jsonrpc": "2.0", "id": null,
                "error": { "code": -32600, "message": format!("unsupported MCP-Protocol-Version {v}; supported: {}",
                    crate::mcp::PROTOCOL_VERSIONS.join(", ")) }
            })));
        }
    }
    Ok(match handle(&state.assistant.tools, &caller, &body).await {
        Reply::Json(v) => HttpResponse::Ok().insert_header((header::CACHE_CONTROL, "no-store")).json(v),
        Reply::Accepted => HttpResponse::build(StatusCode::ACCEPTED).finish(),
        Reply::BadRequest(v) => bad_request(v),
    })
}

/// A 400 of the transport: a problem (`bad_request`, as every error of the service) that is also
/// the JSON-RPC error response MCP's transport allows in the body (`jsonrpc`, `id`, `error`), so
/// a client reading either form understands it.
fn bad_request(rpc: serde_json::Value) -> HttpResponse {
    let detail = rpc["error"]["message"].as_str().unwrap_or("not a JSON-RPC 2.0 message").to_owned();
    let mut body = serde_json::to_value(ApiError::BadRequest(detail).problem()).unwrap_or_default();
    if let (Some(body), Some(rpc)) = (body.as_object_mut(), rpc.as_object()) {
        body.extend(rpc.clone());
    }
    HttpResponse::BadRequest().insert_header((header::CONTENT_TYPE, "application/problem+json")).body(body.to_string())
}

/// The service's own public origin, or any loopback origin (a local client or inspector).
fn origin_allowed(assistant: &AssistantState, origin: &HeaderValue) -> bool {
    let Some(origin) = origin.to_str().ok().and_then(super::origin_of) else { return false };
    if assistant.allowed_origins.contains(&origin) {
        return true;
    }
    let host = url::Url::parse(&origin).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_default();
    host == "localhost" || host == "[::1]" || host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_public_origin_and_loopback_are_allowed() {
        let mut clock = domain::common::ports::MockClock::new();
        clock.expect_now().return_const(time::OffsetDateTime::UNIX_EPOCH);
        let assistant = domain::assistant::Assistant::new(
            std::sync::Arc::new(domain::assistant::MockLiveData::new()),
            std::sync::Arc::new(clock),
            domain::assistant::AssistantSettings::default(),
        );
        let state = AssistantState::new(assistant, Some("https://WMS.example.com/"));
        let ok = |o: &'static str| origin_allowed(&state, &HeaderValue::from_static(o));
        assert!(ok("https://wms.example.com"));
        assert!(ok("http://localhost:6274"));
        assert!(ok("http://127.0.0.1:8080"));
        assert!(ok("http://[::1]:8080"));
        assert!(!ok("https://evil.example"));
        assert!(!ok("http://wms.example.com"));
        assert!(!ok("null"));
    }
}
