//! The audit log's records (`GET /v1/audit-events`).

use domain::audit::AuditEvent;
use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;

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
