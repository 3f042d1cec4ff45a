//! `GET /v1/teams/{team_id}`

use actix_web::{web, HttpResponse};

use crate::authentication::V1Caller;
use crate::dto::TeamRecord;
use crate::error::ApiError;
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
pub async fn get(caller: V1Caller, state: web::Data<AppState>, path: web::Path<i64>) -> Result<HttpResponse, ApiError> {
    let team = state.teams.get(caller.workspace_id, path.into_inner()).await?;
    Ok(HttpResponse::Ok().json(TeamRecord::from(team)))
}
