//! `POST /api/workspaces/{workspace_id}/api-keys`

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::{web, HttpResponse};
use domain::api_keys::CreateApiKey;
use serde::Deserialize;

use crate::authentication::Authenticated;
use crate::dto::{ApiKeyRecord, KeyWithSecret};
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

/// A new key's input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateKeyBody {
    /// Its label, 1 to 100 characters.
    name: String,
    /// RFC 3339 time in the future; absent or null for a key that never expires.
    #[serde(default)]
    expires_at: Option<String>,
    /// Scope names (`docs/access.md`); absent or null for a full-access key.
    #[serde(default)]
    scopes: Option<Vec<String>>,
}

/// Creates a key (admins, `advanced` plan). The full key is in this response only, which no cache
/// may keep.
///
/// # Errors
/// 403 `forbidden` for non-admins, 403 `plan_required` below `advanced`, 422 for bad input.
pub async fn create(
    caller: Authenticated,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    StrictJson(body): StrictJson<CreateKeyBody>,
) -> Result<HttpResponse, ApiError> {
    let auth = &state.auth;
    let cmd = CreateApiKey { name: body.name, expires_at: body.expires_at, scopes: body.scopes };
    let created = state.api_keys.create(&caller, &meta.context(caller.actor), cmd).await?;
    let record = ApiKeyRecord::new(created.key, auth.clock.now());
    Ok(HttpResponse::Created()
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .json(KeyWithSecret { record, key: created.secret.secret }))
}
