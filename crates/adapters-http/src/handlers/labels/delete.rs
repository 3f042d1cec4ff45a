//! `DELETE /v1/labels/{label_id}`

use actix_web::{web, HttpResponse};

use crate::error::ApiError;
use crate::handlers::input::Removal;
use crate::state::AppState;

/// Deletes a label; every thread carrying it loses it.
#[utoipa::path(
    delete,
    operation_id = "delete_label",
    path = "/v1/labels/{label_id}",
    tag = "labels",
    params(("label_id" = i64, Path, description = "Label id")),
    responses((status = 204, description = "Deleted"))
)]
pub async fn delete(state: web::Data<AppState>, req: Removal) -> Result<HttpResponse, ApiError> {
    state.labels.delete(req.workspace, &req.audit, req.id).await?;
    Ok(HttpResponse::NoContent().finish())
}
