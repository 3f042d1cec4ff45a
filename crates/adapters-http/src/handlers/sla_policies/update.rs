//! `PATCH /v1/sla-policies/{policy_id}`

use actix_web::{web, HttpResponse};
use domain::sla::SlaPolicyChangeInput;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::dto::SlaPolicyRecord;
use crate::error::ApiError;
use crate::handlers::input::{present, ChangeInput, RequestBody};
use crate::state::AppState;

/// Fields to change; omitted fields keep their value, a null target stops measuring it (at least
/// one target stays).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateSlaPolicyBody {
    /// New name.
    #[schema(min_length = 1, max_length = 100, example = "Gold customers")]
    name: Option<String>,
    /// New first response target in seconds, or null.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 31_536_000)]
    first_response_seconds: Option<Option<i64>>,
    /// New next response target in seconds, or null.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 31_536_000)]
    next_response_seconds: Option<Option<i64>>,
    /// New resolution target in seconds, or null.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 31_536_000)]
    resolution_seconds: Option<Option<i64>>,
    /// Count only business hours.
    business_hours: Option<bool>,
    /// New channels (empty: every channel).
    channel_ids: Option<Vec<i64>>,
    /// New label names (empty: every thread).
    labels: Option<Vec<String>>,
}

/// Changes an SLA policy. Threads whose cycle already started keep the targets they started with.
#[utoipa::path(
    patch,
    operation_id = "update_sla_policy",
    path = "/v1/sla-policies/{policy_id}",
    tag = "sla_policies",
    params(("policy_id" = i64, Path, description = "SLA policy id")),
    request_body = UpdateSlaPolicyBody,
    responses(
        (status = 200, description = "The policy", body = SlaPolicyRecord),
        (status = 422, description = "A bad field, named (`validation_failed`)", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update(
    state: web::Data<AppState>,
    req: ChangeInput<UpdateSlaPolicyBody>,
) -> Result<HttpResponse, ApiError> {
    let policy = state.sla_policies.update(req.workspace, &req.audit, req.id, req.input).await?;
    Ok(HttpResponse::Ok().json(SlaPolicyRecord::from(policy)))
}

impl RequestBody for UpdateSlaPolicyBody {
    type Input = SlaPolicyChangeInput;
    fn into_input(self) -> SlaPolicyChangeInput {
        SlaPolicyChangeInput {
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
