//! `DELETE /v1/webhooks/{webhook_id}` and its settings twin

use actix_web::{web, HttpResponse};
use domain::webhooks::DestinationId;
use domain::workspace::WorkspaceId;

use super::WebhookPath;
use crate::authentication::{Member, V1Caller};
use crate::error::ApiError;
use crate::state::AppState;

/// Deletes a destination with its delivery log; pending deliveries are dropped.
#[utoipa::path(
    delete,
    path = "/v1/webhooks/{webhook_id}",
    tag = "webhooks",
    params(("webhook_id" = i64, Path, description = "Destination id")),
    responses((status = 204, description = "Deleted"))
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
    state.webhooks.delete(ws, audit, DestinationId(path.webhook_id)).await?;
    Ok(HttpResponse::NoContent().finish())
}
