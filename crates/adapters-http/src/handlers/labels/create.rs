//! `POST /v1/labels`

use actix_web::{web, HttpResponse};
use domain::labels::LabelInput;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::dto::LabelRecord;
use crate::error::ApiError;
use crate::handlers::input::{NewInput, RequestBody};
use crate::state::AppState;

/// A new label.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateLabelBody {
    /// 1 to 50 characters, unique in the workspace ignoring case.
    #[schema(min_length = 1, max_length = 50, example = "vip")]
    name: String,
    /// Colour `#rrggbb` (default `#6b7280`).
    #[schema(pattern = "^#[0-9a-fA-F]{6}$", example = "#22c55e")]
    color: Option<String>,
}

/// Creates a label.
#[utoipa::path(
    post,
    operation_id = "create_label",
    path = "/v1/labels",
    tag = "labels",
    request_body = CreateLabelBody,
    responses(
        (status = 201, description = "The label", body = LabelRecord),
        (status = 409, description = "A label of this name exists (`conflict`)", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create(state: web::Data<AppState>, req: NewInput<CreateLabelBody>) -> Result<HttpResponse, ApiError> {
    let label = state.labels.create(req.workspace, &req.audit, req.input).await?;
    Ok(HttpResponse::Created().json(LabelRecord::from(label)))
}

impl RequestBody for CreateLabelBody {
    type Input = LabelInput;
    fn into_input(self) -> LabelInput {
        LabelInput { name: self.name, color: self.color }
    }
}
