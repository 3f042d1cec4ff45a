//! `GET /v1/teams`

use actix_web::{web, HttpResponse};
use domain::common::page::PageRequest;
use domain::ValidationErrors;

use crate::authentication::V1Caller;
use crate::dto::{TeamList, TeamRecord};
use crate::error::ApiError;
use crate::handlers::PageQuery;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// Lists the workspace's teams with their members, oldest first.
#[utoipa::path(
    get,
    operation_id = "list_teams",
    path = "/v1/teams",
    tag = "teams",
    params(PageQuery),
    responses((status = 200, description = "A page of teams", body = TeamList))
)]
pub async fn list(
    caller: V1Caller,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = PageRequest::new(q.limit, q.cursor.as_deref()).map_err(|e| ApiError::Validation(ValidationErrors(e)))?;
    let page = state.teams.list(caller.workspace_id, page).await?;
    Ok(HttpResponse::Ok()
        .json(TeamList { data: page.data.into_iter().map(TeamRecord::from).collect(), next_cursor: page.next_cursor }))
}
