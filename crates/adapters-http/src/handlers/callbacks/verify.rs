//! `GET /platform-webhooks/{platform}`: the subscription handshake.

use actix_web::{web, HttpResponse};
use serde::Deserialize;

use crate::error::ApiError;
use crate::state::AppState;

/// The platform's handshake query.
#[derive(Debug, Deserialize)]
pub struct Handshake {
    #[serde(rename = "hub.mode")]
    mode: Option<String>,
    #[serde(rename = "hub.verify_token")]
    verify_token: Option<String>,
    #[serde(rename = "hub.challenge")]
    challenge: Option<String>,
}

/// Echoes `hub.challenge` when `hub.verify_token` is the verify token of one of the platform's
/// channels; 403 otherwise.
///
/// # Errors
/// 403 `forbidden` for a wrong token or mode, 404 for an unknown platform.
pub async fn verify(
    path: web::Path<String>,
    query: web::Query<Handshake>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let channel_type = super::platform(&path)?;
    let q = query.into_inner();
    let refused = || ApiError::Forbidden("the verify token does not match any channel".into());
    let (Some("subscribe"), Some(token), Some(challenge)) = (q.mode.as_deref(), q.verify_token, q.challenge) else {
        return Err(refused());
    };
    // The challenge is echoed: only plain tokens, so nothing can be reflected into a page.
    if challenge.is_empty()
        || challenge.len() > 256
        || !challenge.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(ApiError::field("hub.challenge", "must be 1 to 256 letters, digits, `-` or `_`"));
    }
    if !state.callbacks.verify_token_known(channel_type, &token).await? {
        return Err(refused());
    }
    Ok(HttpResponse::Ok().content_type("text/plain; charset=utf-8").body(challenge))
}
