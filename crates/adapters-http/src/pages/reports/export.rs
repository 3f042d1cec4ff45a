//! `GET /settings/workspace/reports/conversations.csv`: the report of the page's selection as
//! `GET /v1/reports/conversations.csv` gives it, for the signed-in member (the `/v1` endpoint takes
//! API keys and tokens, not the page's session).

use actix_web::{web, HttpResponse};
use domain::reports::{csv, ReportError};

use super::Selection;
use crate::pages::analytics::export::file;
use crate::pages::session::Signed;
use crate::pages::PageError;
use crate::state::AppState;

/// The CSV of the selection, one row per group.
///
/// # Errors
/// [`PageError::BadRequest`] naming a bad field.
pub async fn csv(s: Signed, state: web::Data<AppState>, q: web::Query<Selection>) -> Result<HttpResponse, PageError> {
    let report = state.pages.reports.conversations(s.caller.workspace_id, &q.raw()).await.map_err(|e| match e {
        ReportError::Invalid(v) => PageError::BadRequest(v.to_string()),
        ReportError::Unknown(e) => e.into(),
    })?;
    let day = |t: time::OffsetDateTime| t.date().to_string();
    let grouping = q.raw().group_by.unwrap_or_else(|| "none".to_owned());
    let name = format!("wms-conversations-{grouping}-{}-to-{}.csv", day(report.since), day(report.until));
    Ok(file(name, csv::conversation_report(&report)))
}
