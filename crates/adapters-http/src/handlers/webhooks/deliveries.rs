//! `GET /v1/webhooks/{webhook_id}/deliveries` and its settings twin

use actix_web::{web, HttpResponse};
use domain::webhooks::DestinationId;
use domain::workspace::WorkspaceId;

use super::list::PageQuery;
use super::WebhookPath;
use crate::authentication::{Member, V1Caller};
use crate::dto::DeliveryList;
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// The delivery log: deliveries newest first, each with every attempt (time, status code or
/// transport error, duration, response excerpt, attempt number, next attempt).
#[utoipa::path(
    get,
    path = "/v1/webhooks/{webhook_id}/deliveries",
    tag = "webhooks",
    params(("webhook_id" = i64, Path, description = "Destination id"), PageQuery),
    responses((status = 200, description = "A page of deliveries", body = DeliveryList))
)]
pub async fn v1(
    caller: V1Caller,
    state: web::Data<AppState>,
    path: web::Path<WebhookPath>,
    StrictQuery(q): StrictQuery<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    run(caller.workspace_id, &state, &path, &q).await
}

/// The settings API's twin of [`v1`].
pub async fn settings(
    member: Member,
    state: web::Data<AppState>,
    path: web::Path<WebhookPath>,
    StrictQuery(q): StrictQuery<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    run(member.workspace_id, &state, &path, &q).await
}

async fn run(ws: WorkspaceId, state: &AppState, path: &WebhookPath, q: &PageQuery) -> Result<HttpResponse, ApiError> {
    let page = state.webhooks.deliveries(ws, DestinationId(path.webhook_id), q.page()?).await?;
    Ok(HttpResponse::Ok()
        .json(DeliveryList { data: page.data.into_iter().map(Into::into).collect(), next_cursor: page.next_cursor }))
}
