//! The message record: what the REST API returns and the `data` of the `message.*` events
//! (docs/contract.md, "Events as a contract"), serialised from this one type so the two cannot drift.
//! The wire enums are the OpenAPI schemas of the same names.

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

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum DirectionDto {
    /// From the contact.
    Inbound,
    /// To the contact.
    Outbound,
}

impl From<Direction> for DirectionDto {
    fn from(d: Direction) -> Self {
        match d {
            Direction::Inbound => Self::Inbound,
            Direction::Outbound => Self::Outbound,
        }
    }
}

impl From<DirectionDto> for Direction {
    fn from(d: DirectionDto) -> Self {
        match d {
            DirectionDto::Inbound => Self::Inbound,
            DirectionDto::Outbound => Self::Outbound,
        }
    }
}

/// Delivery status of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum MessageStatusDto {
    /// Accepted, waiting to be sent.
    Queued,
    /// Handed to the platform.
    Sent,
    /// Reached the contact's device.
    Delivered,
    /// Read by the contact.
    Read,
    /// Not delivered.
    Failed,
}

impl From<MessageStatus> for MessageStatusDto {
    fn from(s: MessageStatus) -> Self {
        match s {
            MessageStatus::Queued => Self::Queued,
            MessageStatus::Sent => Self::Sent,
            MessageStatus::Delivered => Self::Delivered,
            MessageStatus::Read => Self::Read,
            MessageStatus::Failed => Self::Failed,
        }
    }
}

impl From<MessageStatusDto> for MessageStatus {
    fn from(s: MessageStatusDto) -> Self {
        match s {
            MessageStatusDto::Queued => Self::Queued,
            MessageStatusDto::Sent => Self::Sent,
            MessageStatusDto::Delivered => Self::Delivered,
            MessageStatusDto::Read => Self::Read,
            MessageStatusDto::Failed => Self::Failed,
        }
    }
}

/// A message.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MessageRecord {
    /// Id.
    pub id: i64,
    /// The channel it went through.
    pub channel_id: i64,
    /// Its thread (conversation).
    pub thread_id: i64,
    /// Which way.
    pub direction: DirectionDto,
    /// The text; `""` once the person it was exchanged with has been erased
    /// (`DELETE /v1/contacts/{contact_id}`).
    pub content: String,
    /// Delivery status.
    pub status: MessageStatusDto,
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
            direction: m.direction.into(),
            content: m.content,
            status: m.status.into(),
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
