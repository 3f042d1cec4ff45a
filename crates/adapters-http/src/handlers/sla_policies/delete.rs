//! `DELETE /v1/sla-policies/{policy_id}`

use actix_web::{web, HttpResponse};

use crate::error::ApiError;
use crate::handlers::input::Removal;
use crate::state::AppState;

/// Deletes an SLA policy. Threads it applies to keep their running SLA (`policy_id` null).
#[utoipa::path(
    delete,
    operation_id = "delete_sla_policy",
    path = "/v1/sla-policies/{policy_id}",
    tag = "sla_policies",
    params(("policy_id" = i64, Path, description = "SLA policy id")),
    responses((status = 204, description = "Deleted"))
)]
pub async fn delete(state: web::Data<AppState>, req: Removal) -> Result<HttpResponse, ApiError> {
    state.sla_policies.delete(req.workspace, &req.audit, req.id).await?;
    Ok(HttpResponse::NoContent().finish())
}
