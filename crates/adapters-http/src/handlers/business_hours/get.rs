//! `GET /v1/business-hours`

use actix_web::{web, HttpResponse};
use domain::business_hours::BusinessHoursRecord;

use crate::authentication::Authenticated;
use crate::error::ApiError;
use crate::state::AppState;

/// The workspace's business hours; without any set, `{"timezone": "UTC", "days": {}, "holidays": []}`
/// (every hour counts).
#[utoipa::path(
    get,
    operation_id = "get_business_hours",
    path = "/v1/business-hours",
    tag = "business_hours",
    responses((status = 200, description = "The business hours", body = BusinessHoursRecord))
)]
pub async fn get(caller: Authenticated, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(state.business_hours.get(caller.workspace_id).await?))
}
