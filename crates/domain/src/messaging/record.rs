//! The message record: what the REST API returns and the `data` of the `message.*` events
//! (docs/contract.md, "Events as a contract"), serialised from this one type so the two cannot drift.
//! Its enums are the domain's own ([`Direction`], [`MessageStatus`]), which are the wire names.

use time::OffsetDateTime;

use super::{Direction, Message, MessageStatus, Sender};

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SenderRecord {
    /// `contact`, `user` (a member), `ai_agent` or `api_key`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", schema(example = "user"))]
    pub kind: &'static str,
    /// The contact's, user's, agent's or key's id; null for a key's messages stored before
    /// senders were recorded.
    pub id: Option<i64>,
}

impl From<Sender> for SenderRecord {
    fn from(s: Sender) -> Self {
        Self { kind: s.kind(), id: s.id() }
    }
}

/// A message.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MessageRecord {
    /// Id.
    pub id: i64,
    /// The channel it went through.
    pub channel_id: i64,
    /// Its thread (conversation).
    pub thread_id: i64,
    /// Which way.
    pub direction: Direction,
    /// The text; `""` once the person it was exchanged with has been erased
    /// (`DELETE /v1/contacts/{contact_id}`).
    pub content: String,
    /// Delivery status.
    pub status: MessageStatus,
    /// Creation time (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: OffsetDateTime,
    /// Who sent it.
    pub sender: SenderRecord,
}

impl From<Message> for MessageRecord {
    fn from(m: Message) -> Self {
        Self {
            id: m.id.0,
            channel_id: m.channel_id.0,
            thread_id: m.thread_id.0,
            direction: m.direction,
            content: m.content,
            status: m.status,
            created_at: m.created_at,
            sender: m.sender.into(),
        }
    }
}

impl MessageRecord {
    /// The record as event `data`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}
