//! `POST /api/workspaces/{workspace_id}/api-keys/{key_id}/revoke`

use actix_web::{web, HttpResponse};
use domain::api_keys::ApiKeyId;

use crate::authentication::Member;
use crate::dto::ApiKeyRecord;
use crate::error::ApiError;
use crate::state::AppState;

/// Revokes a key: it stops working at once on every instance; the record stays, `revoked`.
///
/// # Errors
/// 403 `forbidden` for non-admins, 404 for a key that is not this workspace's.
pub async fn revoke(
    member: Member,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64, i64)>,
) -> Result<HttpResponse, ApiError> {
    let (_, key_id) = path.into_inner();
    let key =
        state.api_keys.revoke(&member.into(), &meta.member(member.user_id, member.role), ApiKeyId(key_id)).await?;
    Ok(HttpResponse::Ok().json(ApiKeyRecord::new(key, state.auth.clock.now())))
}
