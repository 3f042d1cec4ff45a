//! `GET /v1/teams`

use actix_web::{web, HttpResponse};

use crate::dto::{TeamList, TeamRecord};
use crate::error::ApiError;
use crate::handlers::input::Listing;
use crate::handlers::{listed, PageQuery};
use crate::state::AppState;

/// Lists the workspace's teams with their members, oldest first.
#[utoipa::path(
    get,
    operation_id = "list_teams",
    path = "/v1/teams",
    tag = "teams",
    params(PageQuery),
    responses((status = 200, description = "A page of teams", body = TeamList))
)]
pub async fn list(state: web::Data<AppState>, req: Listing) -> Result<HttpResponse, ApiError> {
    Ok(listed(state.teams.list(req.workspace, req.page).await?.map(TeamRecord::from)))
}
