//! `POST /v1/users`

use actix_web::http::header::{self, CacheControl, CacheDirective};
use actix_web::{web, HttpRequest, HttpResponse};
use domain::members::AddMember;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::authentication::V1Caller;
use crate::dto::{RoleDto, UserRecord};
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

/// A person to add.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateUserBody {
    /// Their e-mail; an existing wms account joins with its password, a new one is invited.
    #[schema(example = "ann@example.com")]
    email: String,
    /// Their name in this workspace, 1 to 100 characters (default: the e-mail's local part).
    #[schema(min_length = 1, max_length = 100)]
    name: Option<String>,
    /// Their role.
    role: RoleDto,
}

/// A one-time link to choose a password.
#[derive(Debug, Serialize, ToSchema)]
pub struct InvitationRecord {
    /// Absolute URL of the page where the person chooses a password; works once.
    pub url: String,
    /// When it stops working (7 days).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub expires_at: time::OffsetDateTime,
}

/// The new member and, for a person without a password, their invitation (in this answer only).
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedUser {
    #[serde(flatten)]
    user: UserRecord,
    /// Only for a person who has no password yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    invitation: Option<InvitationRecord>,
}

/// Adds a person to the workspace.
#[utoipa::path(
    post,
    operation_id = "create_user",
    path = "/v1/users",
    tag = "users",
    request_body = CreateUserBody,
    responses(
        (status = 201, description = "The member, with an invitation when they have no password yet", body = CreatedUser),
        (status = 409, description = "Already a member", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create(
    req: HttpRequest,
    caller: V1Caller,
    state: web::Data<AppState>,
    StrictJson(body): StrictJson<CreateUserBody>,
) -> Result<HttpResponse, ApiError> {
    let cmd = AddMember { email: body.email, name: body.name, role: body.role.as_str().to_owned(), password: None };
    let added = state
        .members
        .add(&caller.access(), &crate::audit_context::RequestMeta::of(&req).context(caller.principal.actor()), cmd)
        .await?;
    let invitation = added.invitation.map(|i| InvitationRecord {
        url: crate::pages::invitation::url(&state.pages, &req, &i.token),
        expires_at: i.expires_at,
    });
    let location = format!("/v1/users/{}", added.profile.user_id.0);
    Ok(HttpResponse::Created()
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .insert_header((header::LOCATION, location))
        .json(CreatedUser { user: added.profile.into(), invitation }))
}
