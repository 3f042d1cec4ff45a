//! `DELETE /v1/teams/{team_id}`

use actix_web::{web, HttpResponse};

use crate::error::ApiError;
use crate::handlers::input::Removal;
use crate::state::AppState;

/// Deletes a team. Its threads become unassigned, each with a `thread.assigned` event.
#[utoipa::path(
    delete,
    operation_id = "delete_team",
    path = "/v1/teams/{team_id}",
    tag = "teams",
    params(("team_id" = i64, Path, description = "Team id")),
    responses((status = 204, description = "Deleted"))
)]
pub async fn delete(state: web::Data<AppState>, req: Removal) -> Result<HttpResponse, ApiError> {
    state.teams.delete(req.workspace, &req.audit, req.id).await?;
    Ok(HttpResponse::NoContent().finish())
}
