//! `DELETE /v1/webhooks/{webhook_id}` and its settings twin

use actix_web::{web, HttpResponse};
use domain::webhooks::DestinationId;

use super::WebhookPath;
use crate::audit_context::Acting;
use crate::error::ApiError;
use crate::state::AppState;

/// Deletes a destination with its delivery log; pending deliveries are dropped.
#[utoipa::path(
    delete,
    operation_id = "delete_webhooks_webhook_id",
    path = "/v1/webhooks/{webhook_id}",
    tag = "webhooks",
    params(("webhook_id" = i64, Path, description = "Destination id")),
    responses((status = 204, description = "Deleted"))
)]
pub async fn delete(
    who: Acting,
    state: web::Data<AppState>,
    path: web::Path<WebhookPath>,
) -> Result<HttpResponse, ApiError> {
    state.webhooks.delete(who.workspace, &who.audit, DestinationId(path.webhook_id)).await?;
    Ok(HttpResponse::NoContent().finish())
}
