//! `GET /v1/audit-events`

use actix_web::{web, HttpResponse};
use domain::audit::{AuditFilter, AuditService};
use domain::common::page::PageRequest;
use domain::ValidationErrors;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::authentication::Authenticated;
use crate::dto::{AuditEventList, AuditEventRecord};
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// Query of the audit log.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListAuditEventsQuery {
    /// Only this action, such as `api_key.created` or `member.role_changed`.
    #[param(example = "api_key.created")]
    pub action: Option<String>,
    /// Only this kind of actor: `user`, `api_key`, `cli` or `system`.
    #[param(example = "user")]
    pub actor_type: Option<String>,
    /// Only records at or after this RFC 3339 time.
    #[param(example = "2026-11-01T00:00:00Z")]
    pub since: Option<String>,
    /// Only records before this RFC 3339 time.
    pub until: Option<String>,
    /// Page size, 1 to 100.
    #[param(minimum = 1, maximum = 100, default = 25)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

impl ListAuditEventsQuery {
    /// The validated filters and page; every bad field is named.
    ///
    /// # Errors
    /// [`ValidationErrors`].
    pub fn parse(&self) -> Result<(AuditFilter, PageRequest), ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let filter = match AuditFilter::parse(
            self.action.as_deref(),
            self.actor_type.as_deref(),
            self.since.as_deref(),
            self.until.as_deref(),
        ) {
            Ok(f) => Some(f),
            Err(e) => {
                errors.0.extend(e.0);
                None
            }
        };
        // The cursor is bound to the filter set; it is read once the filters are valid, so that a
        // bad filter is not reported as a cursor.
        let page = filter.as_ref().and_then(|f| {
            PageRequest::for_filters(self.limit, self.cursor.as_deref(), f.cursor_key().as_str())
                .map_err(|e| errors.0.extend(e))
                .ok()
        });
        match (filter, page) {
            (Some(f), Some(p)) => Ok((f, p)),
            _ => Err(errors),
        }
    }
}

/// Lists the workspace's audit log, newest first (admins, or a key with `audit:read`).
#[utoipa::path(
    get,
    operation_id = "list_audit_events",
    path = "/v1/audit-events",
    tag = "audit",
    params(ListAuditEventsQuery),
    responses((status = 200, description = "A page of audit records, newest first", body = AuditEventList))
)]
pub async fn list(
    caller: Authenticated,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<ListAuditEventsQuery>,
) -> Result<HttpResponse, ApiError> {
    let (filter, page) = q.parse().map_err(ApiError::Validation)?;
    let page = AuditService::new(state.auth.audit.clone()).list(caller.workspace_id, &filter, page).await?;
    Ok(HttpResponse::Ok().json(AuditEventList {
        data: page.data.into_iter().map(AuditEventRecord::from).collect(),
        next_cursor: page.next_cursor,
    }))
}
