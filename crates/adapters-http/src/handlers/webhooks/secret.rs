//! `GET /v1/webhooks/{webhook_id}/secret` and its settings twin

use actix_web::http::header::CACHE_CONTROL;
use actix_web::{web, HttpResponse};
use domain::webhooks::DestinationId;
use domain::workspace::WorkspaceId;

use super::WebhookPath;
use crate::authentication::{Member, V1Caller};
use crate::dto::SecretRecord;
use crate::error::ApiError;
use crate::state::AppState;

/// Reveals the destination's signing secret (wms keeps it, encrypted, because it signs with it).
#[utoipa::path(
    get,
    path = "/v1/webhooks/{webhook_id}/secret",
    tag = "webhooks",
    params(("webhook_id" = i64, Path, description = "Destination id")),
    responses((status = 200, description = "The current secret", body = SecretRecord))
)]
pub async fn v1(
    caller: V1Caller,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<WebhookPath>,
) -> Result<HttpResponse, ApiError> {
    run(caller.workspace_id, &meta.context(caller.principal.actor()), &state, &path).await
}

/// The settings API's twin of [`v1`].
pub async fn settings(
    member: Member,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<WebhookPath>,
) -> Result<HttpResponse, ApiError> {
    run(member.workspace_id, &meta.member(member.user_id, member.role), &state, &path).await
}

async fn run(
    ws: WorkspaceId,
    audit: &domain::audit::AuditContext,
    state: &AppState,
    path: &WebhookPath,
) -> Result<HttpResponse, ApiError> {
    let secret = state.webhooks.secret(ws, audit, DestinationId(path.webhook_id)).await?;
    Ok(HttpResponse::Ok()
        .insert_header((CACHE_CONTROL, "no-store"))
        .json(SecretRecord { secret: secret.expose().to_owned() }))
}
