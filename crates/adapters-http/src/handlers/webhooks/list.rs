//! `GET /v1/webhooks` and `GET /api/workspaces/{workspace_id}/webhooks`

use actix_web::{web, HttpResponse};

use crate::authentication::Authenticated;
use crate::dto::WebhookList;
use crate::error::ApiError;
use crate::handlers::PageQuery;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// Lists the workspace's webhook destinations, oldest first; the static header values only to
/// callers who may manage destinations (empty for the others).
#[utoipa::path(
    get,
    operation_id = "get_webhooks",
    path = "/v1/webhooks",
    tag = "webhooks",
    params(PageQuery),
    responses((status = 200, description = "A page of destinations", body = WebhookList))
)]
pub async fn list(
    caller: Authenticated,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = state.webhooks.list(caller.workspace_id, super::page(&q)?).await?;
    let data = page.data.into_iter().map(|d| d.seen_by(&caller).into()).collect();
    Ok(HttpResponse::Ok().json(WebhookList { data, next_cursor: page.next_cursor }))
}
