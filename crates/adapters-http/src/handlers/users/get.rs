//! `GET /v1/users/{user_id}`

use actix_web::{web, HttpResponse};
use domain::users::UserId;

use crate::authentication::V1Caller;
use crate::dto::UserRecord;
use crate::error::ApiError;
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
pub async fn get(caller: V1Caller, state: web::Data<AppState>, path: web::Path<i64>) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner();
    let profile = state
        .members
        .find(&caller.access(), UserId(id))
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("user {id} not found")))?;
    Ok(HttpResponse::Ok().json(UserRecord::from(profile)))
}
