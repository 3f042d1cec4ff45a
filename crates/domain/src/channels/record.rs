//! The channel record: what the REST API returns and the `data` of the `channel.*` events
//! (docs/contract.md, "Events as a contract"), serialised from this one type so the two cannot drift.
//! The wire enums are the OpenAPI schemas of the same names.

use time::OffsetDateTime;

use super::{Channel, ChannelStatus, ChannelType};

/// Channel platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ChannelTypeDto {
    /// WhatsApp Business.
    Whatsapp,
    /// Facebook Messenger.
    Messenger,
    /// Instagram messaging.
    Instagram,
}

impl From<ChannelType> for ChannelTypeDto {
    fn from(t: ChannelType) -> Self {
        match t {
            ChannelType::Whatsapp => Self::Whatsapp,
            ChannelType::Messenger => Self::Messenger,
            ChannelType::Instagram => Self::Instagram,
        }
    }
}

impl From<ChannelTypeDto> for ChannelType {
    fn from(t: ChannelTypeDto) -> Self {
        match t {
            ChannelTypeDto::Whatsapp => Self::Whatsapp,
            ChannelTypeDto::Messenger => Self::Messenger,
            ChannelTypeDto::Instagram => Self::Instagram,
        }
    }
}

/// Channel status; `active` means connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ChannelStatusDto {
    /// Connected.
    Active,
    /// Waiting for the platform.
    Pending,
    /// Disconnected.
    Disconnected,
}

impl From<ChannelStatus> for ChannelStatusDto {
    fn from(s: ChannelStatus) -> Self {
        match s {
            ChannelStatus::Active => Self::Active,
            ChannelStatus::Pending => Self::Pending,
            ChannelStatus::Disconnected => Self::Disconnected,
        }
    }
}

impl From<ChannelStatusDto> for ChannelStatus {
    fn from(s: ChannelStatusDto) -> Self {
        match s {
            ChannelStatusDto::Active => Self::Active,
            ChannelStatusDto::Pending => Self::Pending,
            ChannelStatusDto::Disconnected => Self::Disconnected,
        }
    }
}

/// A channel.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChannelRecord {
    /// Id, used as `channel_id` elsewhere.
    pub id: i64,
    /// Platform.
    pub channel_type: ChannelTypeDto,
    /// Name shown to the team.
    pub display_name: String,
    /// E.164 phone number (WhatsApp) or the platform's page/account id.
    pub identifier: String,
    /// Connection status.
    pub status: ChannelStatusDto,
    /// Creation time (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: OffsetDateTime,
    /// The team new threads of the channel go to (`PATCH` it; null: none).
    pub default_team_id: Option<i64>,
}

impl From<Channel> for ChannelRecord {
    fn from(c: Channel) -> Self {
        Self {
            id: c.id.0,
            channel_type: c.channel_type.into(),
            display_name: c.display_name,
            identifier: c.identifier,
            status: c.status.into(),
            created_at: c.created_at,
            default_team_id: c.default_team_id,
        }
    }
}

impl ChannelRecord {
    /// The record as event `data`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}
