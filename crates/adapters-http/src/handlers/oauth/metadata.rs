//! The discovery documents: the authorization server's metadata (RFC 8414) and each MCP
//! endpoint's protected resource metadata (RFC 9728), which the endpoint's 401 points at.

use actix_web::{web, HttpRequest, HttpResponse};
use domain::oauth::{mcp_resource, APP_SCOPE};
use serde_json::json;

use super::issuer;
use super::reply::protocol_headers;
use crate::authentication::member::path_workspace;
use crate::error::ApiError;
use crate::state::AppState;

/// The path of the protected resource metadata of workspace `ws`'s MCP endpoint.
pub fn resource_metadata_path(ws: i64) -> String {
    format!("/.well-known/oauth-protected-resource/workspaces/{ws}/co-admin/mcp")
}

/// `GET /.well-known/oauth-authorization-server`
pub async fn authorization_server(state: web::Data<AppState>) -> HttpResponse {
    let base = issuer(&state);
    let mut res = HttpResponse::Ok().json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/oauth/authorize"),
        "token_endpoint": format!("{base}/oauth/token"),
        "registration_endpoint": format!("{base}/oauth/register"),
        "scopes_supported": [APP_SCOPE],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
        "service_documentation": format!("{base}/docs/assistant-mcp-oauth"),
    }));
    protocol_headers(&mut res);
    res
}

/// `GET /.well-known/oauth-protected-resource/workspaces/{workspace_id}/co-admin/mcp`
///
/// # Errors
/// 404 for a path segment that is no workspace id.
pub async fn protected_resource(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let ws = path_workspace(&req)?;
    let base = issuer(&state);
    let mut res = HttpResponse::Ok().json(json!({
        "resource": mcp_resource(&base, ws),
        "authorization_servers": [base],
        "scopes_supported": [APP_SCOPE],
        "bearer_methods_supported": ["header"],
        "resource_name": "wms assistant (MCP)",
        "resource_documentation": format!("{base}/docs/assistant-mcp-oauth"),
    }));
    protocol_headers(&mut res);
    Ok(res)
}
