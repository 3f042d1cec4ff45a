//! `DELETE /v1/labels/{label_id}`

use actix_web::{web, HttpResponse};

use crate::authentication::V1Caller;
use crate::error::ApiError;
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
pub async fn delete(
    caller: V1Caller,
    state: web::Data<AppState>,
    path: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    state.labels.delete(caller.workspace_id, path.into_inner()).await?;
    Ok(HttpResponse::NoContent().finish())
}
