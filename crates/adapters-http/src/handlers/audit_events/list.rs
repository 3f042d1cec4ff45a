//! `GET /v1/audit-events`

use actix_web::{web, HttpResponse};
use domain::audit::{AuditEvent, AuditFilter, AuditService};
use domain::common::page::PageRequest;
use domain::ValidationErrors;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};

use crate::authentication::Authenticated;
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

/// Who acted.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditActorRecord {
    /// `user`, `api_key`, `cli` or `system`.
    #[serde(rename = "type")]
    #[schema(example = "user")]
    pub kind: String,
    /// The user's or key's id; null for the CLI and the system.
    pub id: Option<i64>,
    /// The user's e-mail, the key's name, `wms CLI` or `wms`.
    pub label: Option<String>,
}

/// What was acted on.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditTargetRecord {
    /// `api_key`, `user`, `webhook`, `channel`, `label`, `team` or `workspace`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Its id.
    pub id: Option<i64>,
}

/// One audit record. It never holds a secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditEventRecord {
    /// Its id.
    pub id: i64,
    /// When it happened.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub occurred_at: OffsetDateTime,
    /// What was done, such as `api_key.created`.
    #[schema(example = "api_key.created")]
    pub action: String,
    /// Who did it.
    pub actor: AuditActorRecord,
    /// What it was done to.
    pub target: AuditTargetRecord,
    /// The client's address.
    pub ip: Option<String>,
    /// The client's `User-Agent`.
    pub user_agent: Option<String>,
    /// The request's `X-Request-Id`.
    pub request_id: Option<String>,
    /// What changed (field names, the role before and after, a key's masked form); never a secret.
    #[schema(value_type = Object)]
    pub details: serde_json::Value,
}

impl From<AuditEvent> for AuditEventRecord {
    fn from(e: AuditEvent) -> Self {
        Self {
            id: e.id,
            occurred_at: e.occurred_at,
            action: e.action,
            actor: AuditActorRecord { kind: e.actor_type, id: e.actor_id, label: e.actor_label },
            target: AuditTargetRecord { kind: e.target_type, id: e.target_id },
            ip: e.ip,
            user_agent: e.user_agent,
            request_id: e.request_id,
            details: e.details,
        }
    }
}

/// A page of audit records.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditEventList {
    /// The records, newest first.
    pub data: Vec<AuditEventRecord>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
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
