//! `DELETE /api/workspaces/{workspace_id}/api-keys/{key_id}`

use actix_web::{web, HttpResponse};

use crate::dto::KeyChange;
use crate::error::ApiError;
use crate::state::AppState;

/// Deletes a key and its record; it stops working at once on every instance.
///
/// # Errors
/// 403 `forbidden` for non-admins, 404 for a key that is not this workspace's.
pub async fn delete(state: web::Data<AppState>, req: KeyChange) -> Result<HttpResponse, ApiError> {
    state.api_keys.delete(&req.caller, &req.audit, req.key).await?;
    Ok(HttpResponse::NoContent().finish())
}
