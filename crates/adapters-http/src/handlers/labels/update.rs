//! `PATCH /v1/labels/{label_id}`

use actix_web::{web, HttpResponse};
use domain::labels::LabelChangeInput;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::dto::LabelRecord;
use crate::error::ApiError;
use crate::handlers::input::{ChangeInput, RequestBody};
use crate::state::AppState;

/// Fields to change; omitted fields keep their value.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateLabelBody {
    /// New name: 1 to 50 characters, unique in the workspace ignoring case.
    #[schema(min_length = 1, max_length = 50, example = "priority")]
    name: Option<String>,
    /// New colour `#rrggbb`.
    #[schema(pattern = "^#[0-9a-fA-F]{6}$", example = "#ef4444")]
    color: Option<String>,
}

/// Renames or recolours a label; the threads carrying it show the new name.
#[utoipa::path(
    patch,
    operation_id = "update_label",
    path = "/v1/labels/{label_id}",
    tag = "labels",
    params(("label_id" = i64, Path, description = "Label id")),
    request_body = UpdateLabelBody,
    responses(
        (status = 200, description = "The label", body = LabelRecord),
        (status = 409, description = "Another label has this name (`conflict`)", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update(state: web::Data<AppState>, req: ChangeInput<UpdateLabelBody>) -> Result<HttpResponse, ApiError> {
    let label = state.labels.update(req.workspace, &req.audit, req.id, req.input).await?;
    Ok(HttpResponse::Ok().json(LabelRecord::from(label)))
}

impl RequestBody for UpdateLabelBody {
    type Input = LabelChangeInput;
    fn into_input(self) -> LabelChangeInput {
        LabelChangeInput { name: self.name, color: self.color }
    }
}
