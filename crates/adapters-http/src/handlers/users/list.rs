//! `GET /v1/users`

use actix_web::{web, HttpResponse};

use crate::dto::{UserList, UserRecord};
use crate::error::ApiError;
use crate::handlers::input::Listing;
use crate::handlers::{listed, PageQuery};
use crate::state::AppState;

/// Lists the workspace's members (active or not), by user id.
#[utoipa::path(
    get,
    operation_id = "list_users",
    path = "/v1/users",
    tag = "users",
    params(PageQuery),
    responses((status = 200, description = "A page of members", body = UserList))
)]
pub async fn list(state: web::Data<AppState>, req: Listing) -> Result<HttpResponse, ApiError> {
    Ok(listed(state.members.list(&req.caller, req.page).await?.map(UserRecord::from)))
}
