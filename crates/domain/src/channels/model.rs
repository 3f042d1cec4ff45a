//! Channel values.

use std::fmt;
use std::str::FromStr;

use super::ChannelRecord;
use crate::common::error::FieldError;
use crate::contacts::E164Phone;
use crate::webhooks::DomainEvent;

/// A channel's database id.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct ChannelId(pub i64);

impl fmt::Display for ChannelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The messaging platform of a channel.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ChannelType {
    /// WhatsApp Business (Cloud API); identified by a phone number.
    Whatsapp,
    /// Facebook Messenger; identified by a page id.
    Messenger,
    /// Instagram messaging; identified by an account id.
    Instagram,
}

impl ChannelType {
    /// Every type.
    pub const ALL: [ChannelType; 3] = [ChannelType::Whatsapp, ChannelType::Messenger, ChannelType::Instagram];

    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelType::Whatsapp => "whatsapp",
            ChannelType::Messenger => "messenger",
            ChannelType::Instagram => "instagram",
        }
    }

    /// Whether its messages may be WhatsApp templates (a catalogue per WhatsApp Business
    /// Account); other platforms have none.
    pub fn has_templates(self) -> bool {
        matches!(self, ChannelType::Whatsapp)
    }

    /// Validates an identifier for this platform: E.164 for WhatsApp, a platform id otherwise.
    ///
    /// # Errors
    /// A [`FieldError`] on `identifier`.
    pub fn validate_identifier(self, raw: &str) -> Result<String, FieldError> {
        match self {
            ChannelType::Whatsapp => E164Phone::new("identifier", raw).map(|p| p.as_str().to_owned()),
            ChannelType::Messenger | ChannelType::Instagram => {
                let t = raw.trim();
                if t.is_empty() || t.len() > 64 || !t.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) {
                    Err(FieldError::new(
                        "identifier",
                        "must be the platform's id: 1 to 64 letters, digits, `.`, `_` or `-`",
                    ))
                } else {
                    Ok(t.to_owned())
                }
            }
        }
    }
}

impl fmt::Display for ChannelType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ChannelType {
    type Err = FieldError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ChannelType::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| FieldError::new("channel_type", "must be one of whatsapp, messenger, instagram"))
    }
}

/// A channel's connection status; `active` means connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ChannelStatus {
    /// Connected: messages flow.
    Active,
    /// Created, waiting for the platform to confirm the connection.
    Pending,
    /// Disconnected by an admin or by the platform.
    Disconnected,
}

impl ChannelStatus {
    /// Every status.
    pub const ALL: [ChannelStatus; 3] = [ChannelStatus::Active, ChannelStatus::Pending, ChannelStatus::Disconnected];

    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelStatus::Active => "active",
            ChannelStatus::Pending => "pending",
            ChannelStatus::Disconnected => "disconnected",
        }
    }

    /// Whether a channel in this status sends its queued messages: only a connected one (a
    /// pending or disconnected channel keeps them queued until it is active again).
    pub fn dispatches(self) -> bool {
        self == ChannelStatus::Active
    }

    /// The statuses that [`dispatches`](Self::dispatches), by stored name (the dispatch claim's
    /// scan looks only at those channels).
    pub fn dispatching() -> Vec<&'static str> {
        Self::ALL.into_iter().filter(|s| s.dispatches()).map(ChannelStatus::as_str).collect()
    }
}

impl FromStr for ChannelStatus {
    type Err = FieldError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ChannelStatus::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| FieldError::new("status", "must be one of active, pending, disconnected"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_connected_channel_sends_its_queue() {
        assert_eq!(ChannelStatus::dispatching(), ["active"]);
        assert!(!ChannelStatus::Pending.dispatches() && !ChannelStatus::Disconnected.dispatches());
    }

    #[test]
    fn whatsapp_identifier_is_e164() {
        assert_eq!(ChannelType::Whatsapp.validate_identifier("+44 20 7946 0958"), Ok("+442079460958".into()));
        assert!(ChannelType::Whatsapp.validate_identifier("page-123").is_err());
    }

    #[test]
    fn messenger_identifier_is_a_platform_id() {
        assert_eq!(ChannelType::Messenger.validate_identifier(" 1029384756 "), Ok("1029384756".into()));
        assert!(ChannelType::Instagram.validate_identifier("has space").is_err());
        assert!(ChannelType::Instagram.validate_identifier("").is_err());
    }

    #[test]
    fn names_round_trip() {
        for t in ChannelType::ALL {
            assert_eq!(t.as_str().parse::<ChannelType>(), Ok(t));
        }
        for s in ChannelStatus::ALL {
            assert_eq!(s.as_str().parse::<ChannelStatus>(), Ok(s));
        }
        assert!("sms".parse::<ChannelType>().is_err());
    }

    fn channel() -> Channel {
        Channel {
            id: ChannelId(7),
            channel_type: ChannelType::Whatsapp,
            display_name: "Support".into(),
            identifier: "+442079460958".into(),
            status: ChannelStatus::Active,
            created_at: time::macros::datetime!(2026-01-02 03:04:05 UTC),
            default_team_id: Some(3),
        }
    }

    #[test]
    fn a_new_channel_is_announced_as_created_with_its_stored_record() {
        let new = NewChannel {
            id: ChannelId(7),
            channel_type: ChannelType::Whatsapp,
            display_name: "Support".into(),
            identifier: "+442079460958".into(),
            status: ChannelStatus::Active,
            credentials: None,
            default_team_id: None,
        };
        assert_eq!(new.event(&channel()), DomainEvent::ChannelCreated(ChannelRecord::from(channel())));
    }

    #[test]
    fn every_accepted_change_is_announced_as_updated_even_one_naming_no_field() {
        let renamed = ChannelChange { display_name: Some("Sales".into()), ..ChannelChange::default() };
        assert_eq!(renamed.event(&channel()), DomainEvent::ChannelUpdated(ChannelRecord::from(channel())));
        assert_eq!(
            ChannelChange::default().event(&channel()),
            DomainEvent::ChannelUpdated(ChannelRecord::from(channel()))
        );
    }
}

/// A channel as stored (credentials are never part of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel {
    /// Its id.
    pub id: ChannelId,
    /// Platform.
    pub channel_type: ChannelType,
    /// Name shown to the team.
    pub display_name: String,
    /// Phone number (WhatsApp) or platform id.
    pub identifier: String,
    /// Connection status.
    pub status: ChannelStatus,
    /// When it was created.
    pub created_at: time::OffsetDateTime,
    /// The team new threads of the channel go to.
    pub default_team_id: Option<i64>,
}

/// Platform credentials ready for storage: encrypted, plus the non-secret parts that route the
/// platform's callbacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedCredentials {
    /// The encrypted credentials.
    pub sealed: Vec<u8>,
    /// Phone number id or page/account id.
    pub account_id: String,
    /// SHA-256 of the verify token, when one is set.
    pub verify_token_digest: Option<[u8; 32]>,
    /// The WhatsApp Business Account id (kept in the clear: it routes template callbacks).
    pub waba_id: Option<String>,
}

/// A validated new channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewChannel {
    /// Its id, reserved before its credentials were sealed for the row.
    pub id: ChannelId,
    /// Platform.
    pub channel_type: ChannelType,
    /// 1..=100 characters.
    pub display_name: String,
    /// Normalised per platform.
    pub identifier: String,
    /// Default `active`.
    pub status: ChannelStatus,
    /// Platform credentials, if given.
    pub credentials: Option<SealedCredentials>,
    /// The team its new threads go to, if any.
    pub default_team_id: Option<i64>,
}

/// A validated change to a channel; `None` keeps a field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelChange {
    /// New display name.
    pub display_name: Option<String>,
    /// New status.
    pub status: Option<ChannelStatus>,
    /// New credentials (replace the old ones whole).
    pub credentials: Option<SealedCredentials>,
    /// New default team (`Some(None)`: none).
    pub default_team_id: Option<Option<i64>>,
}

impl NewChannel {
    /// `channel.created`, with the channel as it was stored.
    pub fn event(&self, channel: &Channel) -> DomainEvent {
        DomainEvent::ChannelCreated(ChannelRecord::from(channel.clone()))
    }
}

impl ChannelChange {
    /// `channel.updated`, with the channel as the change left it: every change the API accepts is
    /// announced, whichever fields it names.
    pub fn event(&self, channel: &Channel) -> DomainEvent {
        DomainEvent::ChannelUpdated(ChannelRecord::from(channel.clone()))
    }
}

/// Filters of a channel listing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ChannelFilter {
    /// Only this platform.
    pub channel_type: Option<ChannelType>,
    /// Only this status.
    pub status: Option<ChannelStatus>,
}

impl ChannelFilter {
    /// The canonical filter set its list cursors are bound to.
    pub fn cursor_key(&self) -> crate::common::page::FilterKey {
        crate::common::page::FilterKey::default()
            .with("channel_type", self.channel_type.map(ChannelType::as_str))
            .with("status", self.status.map(ChannelStatus::as_str))
    }
}
