//! `POST /v1/teams`

use actix_web::http::header::LOCATION;
use actix_web::{web, HttpResponse};
use domain::teams::TeamInput;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::authentication::V1Caller;
use crate::dto::TeamRecord;
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

/// A new team.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTeamBody {
    /// 1 to 100 characters, unique in the workspace.
    #[schema(min_length = 1, max_length = 100, example = "Tier 2")]
    name: String,
    /// User ids of members of the workspace (default none).
    #[serde(default)]
    #[schema(max_items = 500)]
    member_ids: Vec<i64>,
}

/// Creates a team.
#[utoipa::path(
    post,
    operation_id = "create_team",
    path = "/v1/teams",
    tag = "teams",
    request_body = CreateTeamBody,
    responses(
        (status = 201, description = "The team", body = TeamRecord,
            headers(("Location" = String, description = "URL of the team"))),
        (status = 409, description = "A team of this name exists (`conflict`)", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create(
    caller: V1Caller,
    state: web::Data<AppState>,
    StrictJson(body): StrictJson<CreateTeamBody>,
) -> Result<HttpResponse, ApiError> {
    let team =
        state.teams.create(caller.workspace_id, TeamInput { name: body.name, member_ids: body.member_ids }).await?;
    Ok(HttpResponse::Created().insert_header((LOCATION, format!("/v1/teams/{}", team.id))).json(TeamRecord::from(team)))
}
