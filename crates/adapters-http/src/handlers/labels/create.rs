//! `POST /v1/labels`

use actix_web::{web, HttpResponse};
use domain::labels::LabelInput;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::authentication::V1Caller;
use crate::dto::LabelRecord;
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

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
pub async fn create(
    caller: V1Caller,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    StrictJson(body): StrictJson<CreateLabelBody>,
) -> Result<HttpResponse, ApiError> {
    let audit = meta.context(caller.principal.actor());
    let input = LabelInput { name: body.name, color: body.color };
    let label = state.labels.create(caller.workspace_id, &audit, input).await?;
    Ok(HttpResponse::Created().json(LabelRecord::from(label)))
}
