//! `DELETE /v1/users/{user_id}`

use actix_web::{web, HttpResponse};
use domain::users::UserId;

use crate::authentication::V1Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// Removes the user from the workspace (their account and other workspaces stay). Admins only;
/// nobody removes themselves; removing the last active admin is 409.
#[utoipa::path(
    delete,
    operation_id = "delete_user",
    path = "/v1/users/{user_id}",
    tag = "users",
    params(("user_id" = i64, Path, description = "User id")),
    responses(
        (status = 204, description = "Removed"),
        (status = 409, description = "The workspace would have no active admin left", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn delete(
    caller: V1Caller,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    state.members.remove(&caller.access(), &meta.context(caller.principal.actor()), UserId(path.into_inner())).await?;
    Ok(HttpResponse::NoContent().finish())
}
