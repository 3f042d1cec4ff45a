//! `POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry` and its settings twin

use actix_web::{web, HttpResponse};
use domain::webhooks::{DeliveryId, DestinationId};

use super::DeliveryPath;
use crate::audit_context::Acting;
use crate::dto::DeliveryRecord;
use crate::error::ApiError;
use crate::state::AppState;

/// Delivers the event again now, with the same `webhook-id`, and answers with the delivery and
/// the new attempt. Works on failed deliveries (after the schedule ran out) and on inactive
/// destinations; a delivery whose attempt is in progress is 409. The destination's own
/// `max_in_flight` and `rate_limit_per_second` hold for it (429 with `Retry-After` while full).
#[utoipa::path(
    post,
    operation_id = "post_webhooks_webhook_id_deliveries_delivery_id_retry",
    path = "/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry",
    tag = "webhooks",
    params(
        ("webhook_id" = i64, Path, description = "Destination id"),
        ("delivery_id" = i64, Path, description = "Delivery id"),
    ),
    responses(
        (status = 200, description = "The delivery with the new attempt", body = DeliveryRecord),
        (status = 409, description = "An attempt is in progress", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 429, description = "The destination's own `max_in_flight` or `rate_limit_per_second` is full; `Retry-After` says when to try again", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn retry(
    who: Acting,
    state: web::Data<AppState>,
    path: web::Path<DeliveryPath>,
) -> Result<HttpResponse, ApiError> {
    let (id, delivery) = (DestinationId(path.webhook_id), DeliveryId(path.delivery_id));
    let delivery = state.webhooks.redeliver(who.workspace, &who.audit, id, delivery).await?;
    Ok(HttpResponse::Ok().json(DeliveryRecord::from(delivery)))
}
