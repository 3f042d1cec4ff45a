//! `PUT /v1/business-hours`

use actix_web::{web, HttpResponse};
use domain::business_hours::BusinessHoursRecord;

use crate::error::ApiError;
use crate::handlers::input::{NewInput, RequestBody};
use crate::state::AppState;

/// Sets the workspace's business hours (audited as `business_hours.updated`). A record without
/// any interval means none: every hour counts.
#[utoipa::path(
    put,
    operation_id = "set_business_hours",
    path = "/v1/business-hours",
    tag = "business_hours",
    request_body = BusinessHoursRecord,
    responses(
        (status = 200, description = "The business hours as stored", body = BusinessHoursRecord),
        (status = 422, description = "A bad `timezone`, `days` (unknown weekday, bad time, inverted or overlapping intervals) or `holidays` date", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn put(state: web::Data<AppState>, req: NewInput<BusinessHoursRecord>) -> Result<HttpResponse, ApiError> {
    let record = state.business_hours.set(req.workspace, &req.audit, req.input).await?;
    Ok(HttpResponse::Ok().json(record))
}

impl RequestBody for BusinessHoursRecord {
    type Input = BusinessHoursRecord;
    fn into_input(self) -> BusinessHoursRecord {
        self
    }
}
