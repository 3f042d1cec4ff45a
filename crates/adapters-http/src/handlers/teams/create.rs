//! `POST /v1/teams`

use actix_web::{web, HttpResponse};
use domain::teams::TeamInput;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::dto::TeamRecord;
use crate::error::ApiError;
use crate::handlers::created;
use crate::handlers::input::{NewInput, RequestBody};
use crate::state::AppState;

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
    /// The assignment policy: `mode` and `capacity` (1 to 10000, or null for no limit); without
    /// it, `manual` with no capacity.
    assignment: Option<super::update::AssignmentBody>,
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
pub async fn create(state: web::Data<AppState>, req: NewInput<CreateTeamBody>) -> Result<HttpResponse, ApiError> {
    let team = state.teams.create(req.workspace, &req.audit, req.input).await?;
    Ok(created(format!("/v1/teams/{}", team.id), TeamRecord::from(team)))
}

impl RequestBody for CreateTeamBody {
    type Input = TeamInput;
    fn into_input(self) -> TeamInput {
        TeamInput {
            name: self.name,
            member_ids: self.member_ids,
            assignment: self.assignment.map(|a| (a.mode, a.capacity)),
        }
    }
}
