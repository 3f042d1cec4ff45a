//! `POST /v1/webhooks/{webhook_id}/test` and its settings twin

use actix_web::{web, HttpResponse};
use domain::webhooks::DestinationId;
use domain::workspace::WorkspaceId;

use super::{DeliveryRecord, WebhookPath};
use crate::auth::{Member, V1Caller};
use crate::error::ApiError;
use crate::state::AppState;

/// Sends a signed `webhook.test` event to the destination now (also when it is inactive) and
/// answers with the delivery and the attempt, including the endpoint's status. A failed test is
/// not retried automatically.
#[utoipa::path(
    post,
    path = "/v1/webhooks/{webhook_id}/test",
    tag = "webhooks",
    params(("webhook_id" = i64, Path, description = "Destination id")),
    responses((status = 200, description = "The test delivery and its attempt", body = DeliveryRecord))
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
    let delivery = state.webhooks.send_test(ws, DestinationId(path.webhook_id)).await?;
    Ok(HttpResponse::Ok().json(DeliveryRecord::from(delivery)))
}
