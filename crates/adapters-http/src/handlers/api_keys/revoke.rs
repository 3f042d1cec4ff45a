//! `POST /api/workspaces/{workspace_id}/api-keys/{key_id}/revoke`

use actix_web::{web, HttpResponse};

use crate::dto::ApiKeyRecord;
use crate::dto::KeyChange;
use crate::error::ApiError;
use crate::state::AppState;

/// Revokes a key: it stops working at once on every instance; the record stays, `revoked`.
///
/// # Errors
/// 403 `forbidden` for non-admins, 404 for a key that is not this workspace's.
pub async fn revoke(state: web::Data<AppState>, req: KeyChange) -> Result<HttpResponse, ApiError> {
    let key = state.api_keys.revoke(&req.caller, &req.audit, req.key).await?;
    Ok(HttpResponse::Ok().json(ApiKeyRecord::new(key, state.auth.clock.now())))
}
