//! `GET /v1/labels`

use actix_web::{web, HttpResponse};

use crate::dto::{LabelList, LabelRecord};
use crate::error::ApiError;
use crate::handlers::input::Listing;
use crate::handlers::{listed, PageQuery};
use crate::state::AppState;

/// Lists the workspace's labels, oldest first.
#[utoipa::path(
    get,
    operation_id = "list_labels",
    path = "/v1/labels",
    tag = "labels",
    params(PageQuery),
    responses((status = 200, description = "A page of labels", body = LabelList))
)]
pub async fn list(state: web::Data<AppState>, req: Listing) -> Result<HttpResponse, ApiError> {
    Ok(listed(state.labels.list(req.workspace, req.page).await?.map(LabelRecord::from)))
}
