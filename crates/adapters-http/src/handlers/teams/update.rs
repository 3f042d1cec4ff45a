//! `PATCH /v1/teams/{team_id}`

use actix_web::{web, HttpResponse};
use domain::teams::TeamChangeInput;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::dto::TeamRecord;
use crate::error::ApiError;
use crate::handlers::input::{ChangeInput, RequestBody};
use crate::state::AppState;

/// Fields to change; omitted fields keep their value.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateTeamBody {
    /// New name: 1 to 100 characters, unique in the workspace.
    #[schema(min_length = 1, max_length = 100, example = "Billing")]
    name: Option<String>,
    /// The members, replacing the current ones: user ids of members of the workspace.
    #[schema(max_items = 500)]
    member_ids: Option<Vec<i64>>,
    /// The assignment policy: `mode` and `capacity` (1 to 10000, or null for no limit).
    assignment: Option<AssignmentBody>,
}

/// A team's assignment policy as set.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AssignmentBody {
    /// `manual`, `round_robin` or `balanced`.
    #[schema(example = "balanced")]
    pub(super) mode: String,
    /// The most open + pending threads automatic assignment gives one member; null or omitted:
    /// no limit.
    #[serde(default)]
    #[schema(example = 5, minimum = 1, maximum = 10_000)]
    pub(super) capacity: Option<i64>,
}

/// Renames a team, replaces its members or sets its assignment policy (audited as
/// `team.updated` with the policy).
#[utoipa::path(
    patch,
    operation_id = "update_team",
    path = "/v1/teams/{team_id}",
    tag = "teams",
    params(("team_id" = i64, Path, description = "Team id")),
    request_body = UpdateTeamBody,
    responses(
        (status = 200, description = "The team", body = TeamRecord),
        (status = 409, description = "Another team has this name (`conflict`)", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update(state: web::Data<AppState>, req: ChangeInput<UpdateTeamBody>) -> Result<HttpResponse, ApiError> {
    let team = state.teams.update(req.workspace, &req.audit, req.id, req.input).await?;
    Ok(HttpResponse::Ok().json(TeamRecord::from(team)))
}

impl RequestBody for UpdateTeamBody {
    type Input = TeamChangeInput;
    fn into_input(self) -> TeamChangeInput {
        TeamChangeInput {
            name: self.name,
            member_ids: self.member_ids,
            assignment: self.assignment.map(|a| (a.mode, a.capacity)),
        }
    }
}
