//! `GET /v1/reports/conversations.csv`

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::{web, HttpResponse};
use domain::reports::csv;

use super::ReportParams;
use crate::authentication::Authenticated;
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// The conversation report as CSV: one row per group, an empty cell for a null.
#[utoipa::path(
    get,
    operation_id = "get_conversation_report_csv",
    path = "/v1/reports/conversations.csv",
    tag = "reports",
    params(ReportParams),
    responses(
        (status = 200, description = "The report as CSV (header `key_type,key_id,key_name,conversations,…,sla_hit,sla_missed`)", body = String, content_type = "text/csv"),
        (status = 422, description = "A bad `since`, `until`, `group_by` or `business_hours`", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get(
    caller: Authenticated,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<ReportParams>,
) -> Result<HttpResponse, ApiError> {
    let report = state.reports.conversations(caller.workspace_id, &q.into_raw()).await?;
    Ok(HttpResponse::Ok()
        .content_type("text/csv; charset=utf-8")
        .insert_header(CacheControl(vec![CacheDirective::Private, CacheDirective::NoStore]))
        .body(csv::conversation_report(&report)))
}
