//! `GET /v1/sla-policies`

use actix_web::{web, HttpResponse};

use crate::dto::{SlaPolicyList, SlaPolicyRecord};
use crate::error::ApiError;
use crate::handlers::input::Listing;
use crate::handlers::{listed, PageQuery};
use crate::state::AppState;

/// Lists the workspace's SLA policies by id, the order in which they are tried.
#[utoipa::path(
    get,
    operation_id = "list_sla_policies",
    path = "/v1/sla-policies",
    tag = "sla_policies",
    params(PageQuery),
    responses((status = 200, description = "A page of SLA policies", body = SlaPolicyList))
)]
pub async fn list(state: web::Data<AppState>, req: Listing) -> Result<HttpResponse, ApiError> {
    Ok(listed(state.sla_policies.list(req.workspace, req.page).await?.map(SlaPolicyRecord::from)))
}
