//! `DELETE /v1/teams/{team_id}`

use actix_web::{web, HttpResponse};

use crate::authentication::V1Caller;
use crate::error::ApiError;
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
pub async fn delete(
    caller: V1Caller,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let audit = meta.context(caller.principal.actor());
    state.teams.delete(caller.workspace_id, &audit, path.into_inner()).await?;
    Ok(HttpResponse::NoContent().finish())
}
