//! The channel record: what the REST API returns and the `data` of the `channel.*` events
//! (docs/contract.md, "Events as a contract"), serialised from this one type so the two cannot drift.
//! Its enums are the domain's own ([`ChannelType`], [`ChannelStatus`]), which are the wire names.

use time::OffsetDateTime;

use super::{Channel, ChannelStatus, ChannelType};

/// A channel.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChannelRecord {
    /// Id, used as `channel_id` elsewhere.
    pub id: i64,
    /// Platform.
    pub channel_type: ChannelType,
    /// Name shown to the team.
    pub display_name: String,
    /// E.164 phone number (WhatsApp) or the platform's page/account id.
    pub identifier: String,
    /// Connection status.
    pub status: ChannelStatus,
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
            channel_type: c.channel_type,
            display_name: c.display_name,
            identifier: c.identifier,
            status: c.status,
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
