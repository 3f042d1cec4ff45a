//! `GET /v1/reports/conversations`

use actix_web::{web, HttpResponse};
use domain::reports::ConversationReport;

use super::ReportParams;
use crate::authentication::Authenticated;
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// The conversation report of a period: counts, first response (users and AI agents apart),
/// reply and resolution times (count, average, nearest-rank median and p90, in seconds) and SLA
/// outcomes, as one group or per member, team, label or channel.
#[utoipa::path(
    get,
    operation_id = "get_conversation_report",
    path = "/v1/reports/conversations",
    tag = "reports",
    params(ReportParams),
    responses(
        (status = 200, description = "The report", body = ConversationReport),
        (status = 422, description = "A bad `since`, `until`, `group_by` or `business_hours`", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get(
    caller: Authenticated,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<ReportParams>,
) -> Result<HttpResponse, ApiError> {
    let report = state.reports.conversations(caller.workspace_id, &q.into_raw()).await?;
    Ok(HttpResponse::Ok().json(report))
}
