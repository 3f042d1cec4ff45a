//! `GET /v1/webhooks/{webhook_id}/deliveries` and its settings twin

use actix_web::{web, HttpResponse};
use domain::webhooks::DestinationId;

use super::WebhookPath;
use crate::authentication::Authenticated;
use crate::dto::DeliveryList;
use crate::error::ApiError;
use crate::handlers::PageQuery;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// The delivery log: deliveries newest first, each with every attempt (time, status code or
/// transport error, duration, response excerpt, attempt number, next attempt).
#[utoipa::path(
    get,
    operation_id = "get_webhooks_webhook_id_deliveries",
    path = "/v1/webhooks/{webhook_id}/deliveries",
    tag = "webhooks",
    params(("webhook_id" = i64, Path, description = "Destination id"), PageQuery),
    responses((status = 200, description = "A page of deliveries", body = DeliveryList))
)]
pub async fn list(
    caller: Authenticated,
    state: web::Data<AppState>,
    path: web::Path<WebhookPath>,
    StrictQuery(q): StrictQuery<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = state.webhooks.deliveries(caller.workspace_id, DestinationId(path.webhook_id), super::page(&q)?).await?;
    Ok(HttpResponse::Ok()
        .json(DeliveryList { data: page.data.into_iter().map(Into::into).collect(), next_cursor: page.next_cursor }))
}
