//! `POST /v1/sla-policies`

use actix_web::{web, HttpResponse};
use domain::sla::SlaPolicyInput;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::dto::SlaPolicyRecord;
use crate::error::ApiError;
use crate::handlers::input::{NewInput, RequestBody};
use crate::state::AppState;

/// A new SLA policy: at least one target.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSlaPolicyBody {
    /// 1 to 100 characters.
    #[schema(min_length = 1, max_length = 100, example = "Gold customers")]
    name: String,
    /// Seconds from the cycle's start to the first response (1 to 31536000).
    #[schema(minimum = 1, maximum = 31_536_000, example = 3600)]
    first_response_seconds: Option<i64>,
    /// Seconds from a contact's message after a response to the next response.
    #[schema(minimum = 1, maximum = 31_536_000, example = 7200)]
    next_response_seconds: Option<i64>,
    /// Seconds from the cycle's start to `resolved`.
    #[schema(minimum = 1, maximum = 31_536_000, example = 86400)]
    resolution_seconds: Option<i64>,
    /// Count only the workspace's business hours (default false).
    business_hours: Option<bool>,
    /// Channels of the workspace it applies to (default: every channel).
    channel_ids: Option<Vec<i64>>,
    /// Names of labels of the workspace it applies to (default: every thread).
    labels: Option<Vec<String>>,
}

/// Creates an SLA policy. It applies to cycles that start from now on.
#[utoipa::path(
    post,
    operation_id = "create_sla_policy",
    path = "/v1/sla-policies",
    tag = "sla_policies",
    request_body = CreateSlaPolicyBody,
    responses(
        (status = 201, description = "The policy", body = SlaPolicyRecord),
        (status = 422, description = "A bad field, named (`validation_failed`)", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create(state: web::Data<AppState>, req: NewInput<CreateSlaPolicyBody>) -> Result<HttpResponse, ApiError> {
    let policy = state.sla_policies.create(req.workspace, &req.audit, req.input).await?;
    Ok(HttpResponse::Created().json(SlaPolicyRecord::from(policy)))
}

impl RequestBody for CreateSlaPolicyBody {
    type Input = SlaPolicyInput;
    fn into_input(self) -> SlaPolicyInput {
        SlaPolicyInput {
            name: self.name,
            first_response_seconds: self.first_response_seconds,
            next_response_seconds: self.next_response_seconds,
            resolution_seconds: self.resolution_seconds,
            business_hours: self.business_hours,
            channel_ids: self.channel_ids,
            labels: self.labels,
        }
    }
}
