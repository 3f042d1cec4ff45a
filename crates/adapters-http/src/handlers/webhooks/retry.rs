//! `POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry` and its settings twin

use actix_web::{web, HttpResponse};
use domain::webhooks::{DeliveryId, DestinationId};
use domain::workspace::WorkspaceId;

use super::DeliveryPath;
use crate::authentication::{Member, V1Caller};
use crate::dto::DeliveryRecord;
use crate::error::ApiError;
use crate::state::AppState;

/// Delivers the event again now, with the same `webhook-id`, and answers with the delivery and
/// the new attempt. Works on failed deliveries (after the schedule ran out) and on inactive
/// destinations; a delivery whose attempt is in progress is 409.
#[utoipa::path(
    post,
    path = "/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry",
    tag = "webhooks",
    params(
        ("webhook_id" = i64, Path, description = "Destination id"),
        ("delivery_id" = i64, Path, description = "Delivery id"),
    ),
    responses(
        (status = 200, description = "The delivery with the new attempt", body = DeliveryRecord),
        (status = 409, description = "An attempt is in progress", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn v1(
    caller: V1Caller,
    state: web::Data<AppState>,
    path: web::Path<DeliveryPath>,
) -> Result<HttpResponse, ApiError> {
    run(caller.workspace_id, &state, &path).await
}

/// The settings API's twin of [`v1`].
pub async fn settings(
    member: Member,
    state: web::Data<AppState>,
    path: web::Path<DeliveryPath>,
) -> Result<HttpResponse, ApiError> {
    run(member.workspace_id, &state, &path).await
}

async fn run(ws: WorkspaceId, state: &AppState, path: &DeliveryPath) -> Result<HttpResponse, ApiError> {
    let delivery = state.webhooks.redeliver(ws, DestinationId(path.webhook_id), DeliveryId(path.delivery_id)).await?;
    Ok(HttpResponse::Ok().json(DeliveryRecord::from(delivery)))
}
