//! `DELETE /v1/users/{user_id}`

use actix_web::{web, HttpResponse};
use domain::users::UserId;

use crate::error::ApiError;
use crate::handlers::input::Removal;
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
pub async fn delete(state: web::Data<AppState>, req: Removal) -> Result<HttpResponse, ApiError> {
    state.members.remove(&req.caller, &req.audit, UserId(req.id)).await?;
    Ok(HttpResponse::NoContent().finish())
}
