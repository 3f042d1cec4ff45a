//! `GET /v1/webhooks/{webhook_id}` and its settings twin

use actix_web::{web, HttpResponse};
use domain::webhooks::DestinationId;

use super::WebhookPath;
use crate::authentication::Authenticated;
use crate::dto::WebhookRecord;
use crate::error::ApiError;
use crate::state::AppState;

/// One webhook destination; the static header values only to callers who may manage
/// destinations (empty for the others).
#[utoipa::path(
    get,
    operation_id = "get_webhooks_webhook_id",
    path = "/v1/webhooks/{webhook_id}",
    tag = "webhooks",
    params(("webhook_id" = i64, Path, description = "Destination id")),
    responses((status = 200, description = "The destination", body = WebhookRecord))
)]
pub async fn get(
    caller: Authenticated,
    state: web::Data<AppState>,
    path: web::Path<WebhookPath>,
) -> Result<HttpResponse, ApiError> {
    let webhook = state.webhooks.get(caller.workspace_id, DestinationId(path.webhook_id)).await?;
    Ok(HttpResponse::Ok().json(WebhookRecord::from(webhook.seen_by(&caller))))
}
