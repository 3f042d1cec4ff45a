//! `PATCH /v1/users/{user_id}`

use actix_web::{web, HttpResponse};
use domain::members::{empty_change, MemberChange};
use domain::users::UserId;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::dto::{RoleDto, UserRecord};
use crate::error::ApiError;
use crate::handlers::input::{ChangeInput, RequestBody};
use crate::state::AppState;

/// Fields to change; omitted fields keep their value.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateUserBody {
    /// Display name, 1 to 100 characters.
    #[schema(min_length = 1, max_length = 100)]
    name: Option<String>,
    /// Role in the workspace.
    role: Option<RoleDto>,
    /// Activate or deactivate the membership.
    active: Option<bool>,
    /// `online` or `away`: any member for themselves, admins for others.
    #[schema(example = "away")]
    availability: Option<String>,
}

/// Changes a member's name, role, active flag or availability. A member may rename themselves and
/// set their own availability; changing anyone else, or a role or the active flag, is for admins; nobody changes their own role or
/// deactivates themselves (403). Demoting or deactivating the last active admin is 409.
#[utoipa::path(
    patch,
    operation_id = "update_user",
    path = "/v1/users/{user_id}",
    tag = "users",
    params(("user_id" = i64, Path, description = "User id")),
    request_body = UpdateUserBody,
    responses(
        (status = 200, description = "The updated profile", body = UserRecord),
        (status = 409, description = "The workspace would have no active admin left", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update(state: web::Data<AppState>, req: ChangeInput<UpdateUserBody>) -> Result<HttpResponse, ApiError> {
    let body = req.input;
    let change = MemberChange::new(body.name.as_deref(), body.role.map(RoleDto::as_str), body.active)?
        .with_availability(body.availability.as_deref())?;
    if change.is_empty() {
        return Err(empty_change().into());
    }
    let profile = state.members.update(&req.caller, &req.audit, UserId(req.id), &change).await?;
    Ok(HttpResponse::Ok().json(UserRecord::from(profile)))
}

/// Read through [`MemberChange::new`], which names every bad field.
impl RequestBody for UpdateUserBody {
    type Input = Self;
    fn into_input(self) -> Self {
        self
    }
}
