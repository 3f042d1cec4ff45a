//! `POST /oauth/register`: dynamic client registration (RFC 7591) of public clients.

use actix_web::{web, HttpResponse};
use domain::oauth::{OAuthErrorCode, OAuthRefusal, APP_SCOPE};
use serde_json::json;

use super::reply::{protocol_headers, OAuthReply};
use crate::error::ApiError;
use crate::extract::RawBody;
use crate::state::AppState;

/// Registers an app; 201 with its `client_id` and metadata.
///
/// # Errors
/// 400 `invalid_client_metadata` or `invalid_redirect_uri`.
pub async fn register(state: web::Data<AppState>, body: Result<RawBody, ApiError>) -> Result<HttpResponse, OAuthReply> {
    let RawBody(body) = body.map_err(OAuthReply::unreadable)?;
    let metadata: serde_json::Value = serde_json::from_slice(&body).map_err(|e| {
        OAuthRefusal::new(OAuthErrorCode::InvalidClientMetadata, format!("the body must be a JSON object: {e}"))
    })?;
    let client = state.oauth.register(&metadata).await?;
    let mut res = HttpResponse::Created().json(json!({
        "client_id": client.client_id,
        "client_id_issued_at": client.created_at.unix_timestamp(),
        "client_name": client.client_name,
        "redirect_uris": client.redirect_uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "scope": APP_SCOPE,
    }));
    protocol_headers(&mut res);
    Ok(res)
}
