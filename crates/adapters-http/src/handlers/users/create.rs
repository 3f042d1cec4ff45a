//! `POST /v1/users`

use actix_web::http::header::{self, CacheControl, CacheDirective};
use actix_web::{web, HttpRequest, HttpResponse};
use domain::members::AddMember;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::authentication::Authenticated;
use crate::dto::{RoleDto, UserRecord};
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

/// A person to add.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateUserBody {
    /// Their e-mail: wms e-mails the person a one-time link to accept (an existing account signs
    /// in to accept, a new one chooses a password).
    #[schema(example = "ann@example.com")]
    email: String,
    /// Their name in this workspace, 1 to 100 characters (default: the e-mail's local part).
    #[schema(min_length = 1, max_length = 100)]
    name: Option<String>,
    /// Their role.
    role: RoleDto,
}

/// Adds a person to the workspace.
#[utoipa::path(
    post,
    operation_id = "create_user",
    path = "/v1/users",
    tag = "users",
    request_body = CreateUserBody,
    responses(
        (status = 201, description = "The member, `invited` until they accept the e-mailed link (the same answer whether or not they have a wms account)", body = UserRecord),
        (status = 403, description = "An API key adding an admin", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 409, description = "Already an active or deactivated member", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create(
    req: HttpRequest,
    caller: Authenticated,
    state: web::Data<AppState>,
    StrictJson(body): StrictJson<CreateUserBody>,
) -> Result<HttpResponse, ApiError> {
    let cmd = AddMember { email: body.email, name: body.name, role: body.role.as_str().to_owned(), password: None };
    let added =
        state.members.add(&caller, &crate::audit_context::RequestMeta::of(&req).context(caller.actor), cmd).await?;
    // The link went to the address: never in this answer (`docs/contract.md`, "Members").
    let location = format!("/v1/users/{}", added.profile.user_id.0);
    Ok(HttpResponse::Created()
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .insert_header((header::LOCATION, location))
        .json(UserRecord::from(added.profile)))
}
