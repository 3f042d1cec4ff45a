//! `GET /v1/users/{user_id}`

use actix_web::{web, HttpResponse};
use domain::users::UserId;

use crate::dto::UserRecord;
use crate::error::ApiError;
use crate::handlers::input::Lookup;
use crate::state::AppState;

/// A member of the workspace. Someone outside it is not found.
#[utoipa::path(
    get,
    operation_id = "get_user",
    path = "/v1/users/{user_id}",
    tag = "users",
    params(("user_id" = i64, Path, description = "User id")),
    responses((status = 200, description = "The user's profile", body = UserRecord))
)]
pub async fn get(state: web::Data<AppState>, req: Lookup) -> Result<HttpResponse, ApiError> {
    let found = state.members.find(&req.caller, UserId(req.id)).await?;
    let profile = found.ok_or_else(|| ApiError::NotFound(format!("user {} not found", req.id)))?;
    Ok(HttpResponse::Ok().json(UserRecord::from(profile)))
}
