//! `GET /v1/labels`

use actix_web::{web, HttpResponse};
use domain::common::page::PageRequest;
use domain::ValidationErrors;

use crate::authentication::V1Caller;
use crate::dto::{LabelList, LabelRecord};
use crate::error::ApiError;
use crate::handlers::PageQuery;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// Lists the workspace's labels, oldest first.
#[utoipa::path(
    get,
    operation_id = "list_labels",
    path = "/v1/labels",
    tag = "labels",
    params(PageQuery),
    responses((status = 200, description = "A page of labels", body = LabelList))
)]
pub async fn list(
    caller: V1Caller,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = PageRequest::new(q.limit, q.cursor.as_deref()).map_err(|e| ApiError::Validation(ValidationErrors(e)))?;
    let page = state.labels.list(caller.workspace_id, page).await?;
    Ok(HttpResponse::Ok().json(LabelList {
        data: page.data.into_iter().map(LabelRecord::from).collect(),
        next_cursor: page.next_cursor,
    }))
}
