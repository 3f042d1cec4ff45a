//! `GET /v1/users`

use actix_web::{web, HttpResponse};
use domain::common::page::PageRequest;
use domain::ValidationErrors;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::authentication::V1Caller;
use crate::dto::{UserList, UserRecord};
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// Query of the member listing.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListUsersQuery {
    /// Page size, 1 to 100.
    #[param(minimum = 1, maximum = 100, default = 25)]
    limit: Option<i64>,
    /// `next_cursor` of the previous page.
    cursor: Option<String>,
}

/// Lists the workspace's members (active or not), by user id.
#[utoipa::path(
    get,
    operation_id = "list_users",
    path = "/v1/users",
    tag = "users",
    params(ListUsersQuery),
    responses((status = 200, description = "A page of members", body = UserList))
)]
pub async fn list(
    caller: V1Caller,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<ListUsersQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = PageRequest::new(q.limit, q.cursor.as_deref()).map_err(|e| ApiError::Validation(ValidationErrors(e)))?;
    let page = state.members.list(&caller.access(), page).await?;
    Ok(HttpResponse::Ok()
        .json(UserList { data: page.data.into_iter().map(UserRecord::from).collect(), next_cursor: page.next_cursor }))
}
