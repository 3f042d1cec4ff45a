//! `GET /v1/teams/{team_id}`

use actix_web::{web, HttpResponse};

use crate::dto::TeamRecord;
use crate::error::ApiError;
use crate::handlers::input::Lookup;
use crate::state::AppState;

/// One team of the workspace.
#[utoipa::path(
    get,
    operation_id = "get_team",
    path = "/v1/teams/{team_id}",
    tag = "teams",
    params(("team_id" = i64, Path, description = "Team id")),
    responses((status = 200, description = "The team", body = TeamRecord))
)]
pub async fn get(state: web::Data<AppState>, req: Lookup) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(TeamRecord::from(state.teams.get(req.workspace, req.id).await?)))
}
