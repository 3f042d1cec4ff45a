//! The thread record: what the REST API returns and the `data` of the `thread.*` events
//! (docs/contract.md, "Events as a contract"), serialised from this one type so the two cannot drift.
//! The wire enums are the OpenAPI schemas of the same names.

use time::OffsetDateTime;

use super::Thread;
use crate::messaging::window::ServiceWindow;
use crate::sla::ThreadSlaRecord;

/// Who handles a thread.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AssigneeRecord {
    /// `user` (a member), `team` or `ai_agent`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", schema(example = "team"))]
    pub kind: String,
    /// The user's, team's or agent's id.
    pub id: i64,
}

/// The customer-service window of a thread: free text may be sent while it is open, until 24
/// hours after the contact's latest message (platform time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ServiceWindowRecord {
    /// Free text may be sent now.
    pub open: bool,
    /// When it closes or closed (RFC 3339, UTC); null when the contact never wrote.
    #[serde(with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub expires_at: Option<OffsetDateTime>,
}

/// A thread (conversation).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ThreadRecord {
    /// Id.
    pub id: i64,
    /// Channel.
    pub channel_id: i64,
    /// Contact.
    pub contact_id: i64,
    /// Status: `open`, `pending`, `snoozed` or `resolved`.
    #[cfg_attr(feature = "openapi", schema(example = "open"))]
    pub status: String,
    /// Inbound messages not read yet.
    pub unread_count: i32,
    /// Who handles it; null when unassigned.
    pub assignee: Option<AssigneeRecord>,
    /// `ai`, `requested` or `human` when an AI agent is involved.
    pub handover_status: Option<String>,
    /// Time of the last message (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub last_message_at: Option<OffsetDateTime>,
    /// Creation time (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: OffsetDateTime,
    /// The names of its labels, alphabetical (ignoring case).
    #[cfg_attr(feature = "openapi", schema(example = json!(["billing", "vip"])))]
    pub labels: Vec<String>,
    /// The snooze's end (RFC 3339, UTC); null unless snoozed with a time.
    #[serde(with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub snoozed_until: Option<OffsetDateTime>,
    /// Why the status last changed: `manual`, `contact_replied` or `snooze_expired`; null before
    /// any change.
    pub status_reason: Option<String>,
    /// The team the thread belongs to.
    pub team_id: Option<i64>,
    /// When it was last assigned (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub assigned_at: Option<OffsetDateTime>,
    /// Why it has its assignee: `manual`, `round_robin`, `balanced` or `team_deleted`; null when
    /// never assigned.
    pub assignment_reason: Option<String>,
    /// Whether free text may be sent now (outside it: a WhatsApp template, or `human_agent` on
    /// Messenger and Instagram).
    pub service_window: ServiceWindowRecord,
    /// Its SLA in the current cycle (`docs/contract.md`, "SLA policies"); null when no policy
    /// applied at the cycle's start.
    pub sla: Option<ThreadSlaRecord>,
}

impl From<Thread> for ThreadRecord {
    fn from(t: Thread) -> Self {
        Self {
            id: t.id,
            channel_id: t.channel_id,
            contact_id: t.contact_id,
            status: t.status,
            unread_count: t.unread_count,
            assignee: t.assignee.map(|a| AssigneeRecord { kind: a.kind().to_owned(), id: a.id() }),
            handover_status: t.handover_status,
            last_message_at: t.last_message_at,
            created_at: t.created_at,
            labels: t.labels,
            snoozed_until: t.snoozed_until,
            status_reason: t.status_reason.map(|r| r.as_str().to_owned()),
            team_id: t.team_id,
            assigned_at: t.assigned_at,
            assignment_reason: t.assignment_reason.map(|r| r.as_str().to_owned()),
            // The record says how the window stands when it is read (or the event recorded).
            service_window: {
                let w = ServiceWindow::at(t.latest_inbound_at, OffsetDateTime::now_utc());
                ServiceWindowRecord { open: w.open, expires_at: w.expires_at }
            },
            sla: t.sla.as_ref().map(ThreadSlaRecord::from),
        }
    }
}

impl ThreadRecord {
    /// The record as event `data`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}
