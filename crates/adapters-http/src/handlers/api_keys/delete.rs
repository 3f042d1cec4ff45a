//! `DELETE /api/workspaces/{workspace_id}/api-keys/{key_id}`

use actix_web::{web, HttpResponse};
use domain::api_keys::ApiKeyId;

use crate::authentication::Member;
use crate::error::ApiError;
use crate::state::AppState;

/// Deletes a key and its record; it stops working at once on every instance.
///
/// # Errors
/// 403 `forbidden` for non-admins, 404 for a key that is not this workspace's.
pub async fn delete(
    member: Member,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64, i64)>,
) -> Result<HttpResponse, ApiError> {
    let (_, key_id) = path.into_inner();
    state.api_keys.delete(&member.into(), &meta.member(member.user_id, member.role), ApiKeyId(key_id)).await?;
    Ok(HttpResponse::NoContent().finish())
}
