//! `POST /v1/auth/login`

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::{web, HttpRequest, HttpResponse};
use domain::workspace::WorkspaceId;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::audit_context::login_request;
use crate::dto::{LoginResponse, LoginUserDto};
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

/// Sign-in input. No `Debug`: it holds a password.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginBody {
    /// The account's e-mail.
    email: String,
    /// Its password.
    password: String,
    /// The workspace to sign in to; required when the user belongs to several.
    #[serde(default)]
    workspace_id: Option<i64>,
}

/// Exchanges an e-mail and password for a login token bound to one membership. Wrong e-mail and
/// wrong password both answer 401 `invalid_credentials`; repeated failures answer 429.
#[utoipa::path(
    post,
    path = "/v1/auth/login",
    tag = "auth",
    security(()),
    request_body = LoginBody,
    responses(
        (status = 200, description = "Signed in", body = LoginResponse),
        (status = 400, description = "The body is not valid JSON (`bad_request`)", body = crate::error::Problem,
         content_type = "application/problem+json"),
        (status = 401, description = "Wrong e-mail or password (`invalid_credentials`)", body = crate::error::Problem,
         content_type = "application/problem+json"),
        (status = 403, description = "Right credentials but no active membership (`forbidden`)",
         body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "The body is larger than 256 KiB (`payload_too_large`)",
         body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 415, description = "The body is not `application/json` (`unsupported_media_type`)",
         body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Missing or invalid field, or `workspace_id` needed or not yours \
         (`validation_failed`)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 429, description = "Too many failed sign-ins for this e-mail or client (`rate_limited`)",
         body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The database is unavailable (`service_unavailable`)",
         body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn login(
    req: HttpRequest,
    state: web::Data<AppState>,
    StrictJson(body): StrictJson<LoginBody>,
) -> Result<HttpResponse, ApiError> {
    let attempt = login_request(&req, body.email, body.password, body.workspace_id.map(WorkspaceId));
    let done = domain::auth::login(state.auth.login_ports(), &state.auth.login, attempt).await?;
    let name = done.member_name().to_owned();
    Ok(HttpResponse::Ok().insert_header(CacheControl(vec![CacheDirective::NoStore])).json(LoginResponse {
        token: done.token.secret,
        token_type: "Bearer",
        expires_at: done.expires_at,
        workspace_id: done.membership.workspace_id.0,
        user: LoginUserDto { id: done.user.id.0, email: done.user.email, name, role: done.membership.role.as_str() },
    }))
}
