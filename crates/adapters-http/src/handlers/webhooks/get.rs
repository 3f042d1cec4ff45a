//! `GET /v1/webhooks/{webhook_id}` and its settings twin

use actix_web::{web, HttpResponse};
use domain::webhooks::DestinationId;
use domain::workspace::WorkspaceId;

use super::WebhookPath;
use crate::authentication::{Member, V1Caller};
use crate::dto::WebhookRecord;
use crate::error::ApiError;
use crate::state::AppState;

/// One webhook destination.
#[utoipa::path(
    get,
    path = "/v1/webhooks/{webhook_id}",
    tag = "webhooks",
    params(("webhook_id" = i64, Path, description = "Destination id")),
    responses((status = 200, description = "The destination", body = WebhookRecord))
)]
pub async fn v1(
    caller: V1Caller,
    state: web::Data<AppState>,
    path: web::Path<WebhookPath>,
) -> Result<HttpResponse, ApiError> {
    run(caller.workspace_id, &state, &path).await
}

/// The settings API's twin of [`v1`].
pub async fn settings(
    member: Member,
    state: web::Data<AppState>,
    path: web::Path<WebhookPath>,
) -> Result<HttpResponse, ApiError> {
    run(member.workspace_id, &state, &path).await
}

async fn run(ws: WorkspaceId, state: &AppState, path: &WebhookPath) -> Result<HttpResponse, ApiError> {
    let webhook = state.webhooks.get(ws, DestinationId(path.webhook_id)).await?;
    Ok(HttpResponse::Ok().json(WebhookRecord::from(webhook)))
}
