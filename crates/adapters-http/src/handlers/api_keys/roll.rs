//! `POST /api/workspaces/{workspace_id}/api-keys/{key_id}/roll`

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::{web, HttpResponse};
use domain::api_keys::RollApiKey;
use serde::Deserialize;

use crate::dto::{ApiKeyRecord, KeyChange, KeyWithSecret};
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

/// A roll's input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RollKeyBody {
    /// How long the old key keeps working: 0 to 604800 seconds.
    #[serde(default)]
    grace_seconds: Option<i64>,
}

/// Rolls a key (admins, `advanced` plan): 201 with the successor, which no cache may keep; the
/// old key works until the grace ends and its record gains `rolled_to`.
///
/// # Errors
/// 403 `forbidden` for non-admins, 403 `plan_required` below `advanced`, 404 for a key that is
/// not this workspace's, 409 `conflict` for a revoked, expired or already rolled key, 422 naming
/// `grace_seconds`.
pub async fn roll(
    state: web::Data<AppState>,
    req: KeyChange,
    StrictJson(body): StrictJson<RollKeyBody>,
) -> Result<HttpResponse, ApiError> {
    let cmd = RollApiKey { grace_seconds: body.grace_seconds };
    let rolled = state.api_keys.roll(&req.caller, &req.audit, req.key, cmd).await?;
    let record = ApiKeyRecord::new(rolled.new, state.auth.clock.now());
    Ok(HttpResponse::Created()
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .json(KeyWithSecret { record, key: rolled.secret.secret }))
}
