//! `GET /v1/webhooks` and `GET /api/workspaces/{workspace_id}/webhooks`

use actix_web::{web, HttpResponse};
use domain::common::page::PageRequest;
use domain::workspace::WorkspaceId;
use domain::ValidationErrors;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::authentication::{Member, V1Caller};
use crate::dto::WebhookList;
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// Page of a listing.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Page size, 1 to 100.
    #[param(minimum = 1, maximum = 100, default = 25)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

impl PageQuery {
    /// The validated page.
    ///
    /// # Errors
    /// 422 naming `limit` or `cursor`.
    pub fn page(&self) -> Result<PageRequest, ApiError> {
        PageRequest::new(self.limit, self.cursor.as_deref()).map_err(|e| ApiError::Validation(ValidationErrors(e)))
    }
}

/// Lists the workspace's webhook destinations, oldest first.
#[utoipa::path(
    get,
    path = "/v1/webhooks",
    tag = "webhooks",
    params(PageQuery),
    responses((status = 200, description = "A page of destinations", body = WebhookList))
)]
pub async fn v1(
    caller: V1Caller,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    run(caller.workspace_id, &state, &q).await
}

/// The settings API's twin of [`v1`].
pub async fn settings(
    member: Member,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    run(member.workspace_id, &state, &q).await
}

async fn run(ws: WorkspaceId, state: &AppState, q: &PageQuery) -> Result<HttpResponse, ApiError> {
    let page = state.webhooks.list(ws, q.page()?).await?;
    Ok(HttpResponse::Ok()
        .json(WebhookList { data: page.data.into_iter().map(Into::into).collect(), next_cursor: page.next_cursor }))
}
