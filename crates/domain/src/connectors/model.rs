//! Connector values: credentials, outbound content, platform events.

use time::OffsetDateTime;

use crate::channels::ChannelType;
use crate::common::error::{FieldError, ValidationErrors};
use crate::messaging::MessageStatus;

/// A channel's platform credentials. Stored encrypted; never returned by any API or page.
#[derive(Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChannelCredentials {
    /// WhatsApp: the phone number id of the Cloud API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number_id: Option<String>,
    /// Messenger: the Facebook page id; Instagram: the Instagram account id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_id: Option<String>,
    /// Access token (system-user token for WhatsApp, page access token for Messenger/Instagram).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_token: Option<String>,
    /// The app secret that signs the platform's callbacks (`X-Hub-Signature-256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_secret: Option<String>,
    /// The token the platform echoes in its subscription handshake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_token: Option<String>,
    /// WhatsApp: the WhatsApp Business Account (WABA) id, whose message templates the channel
    /// sends and whose template callbacks name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waba_id: Option<String>,
}

impl std::fmt::Debug for ChannelCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelCredentials")
            .field("phone_number_id", &self.phone_number_id)
            .field("page_id", &self.page_id)
            .field("access_token", &self.access_token.as_ref().map(|_| "…"))
            .field("app_secret", &self.app_secret.as_ref().map(|_| "…"))
            .field("verify_token", &self.verify_token.as_ref().map(|_| "…"))
            .field("waba_id", &self.waba_id)
            .finish()
    }
}

impl ChannelCredentials {
    /// Validates credentials for a channel type: the account id the platform needs and an access
    /// token; the callback secrets are optional but, when given, must be usable.
    ///
    /// # Errors
    /// [`ValidationErrors`] naming `credentials.<field>`.
    pub fn validate(self, channel_type: ChannelType) -> Result<Self, ValidationErrors> {
        let mut errors = Vec::new();
        // At least one letter or digit: `.` or `..` would be a path step in the Graph API URL.
        let id_ok = |v: &str| {
            v.len() <= 64
                && v.chars().any(|c| c.is_ascii_alphanumeric())
                && v.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        };
        let secret_ok = |v: &str| (8..=512).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_graphic());
        let (needed, other) = match channel_type {
            ChannelType::Whatsapp => (("phone_number_id", &self.phone_number_id), ("page_id", &self.page_id)),
            ChannelType::Messenger | ChannelType::Instagram => {
                (("page_id", &self.page_id), ("phone_number_id", &self.phone_number_id))
            }
        };
        match needed.1 {
            Some(v) if id_ok(v) => {}
            Some(_) => errors.push(FieldError::new(
                format!("credentials.{}", needed.0),
                "must be the platform's id (letters, digits, `.`, `_`, `-`)",
            )),
            None => errors.push(FieldError::new(
                format!("credentials.{}", needed.0),
                format!("is required for {channel_type} channels"),
            )),
        }
        if other.1.is_some() {
            errors.push(FieldError::new(
                format!("credentials.{}", other.0),
                format!("does not apply to {channel_type} channels"),
            ));
        }
        match (&self.waba_id, channel_type) {
            (Some(v), ChannelType::Whatsapp) if !id_ok(v) => errors.push(FieldError::new(
                "credentials.waba_id",
                "must be the WhatsApp Business Account id (letters, digits, `.`, `_`, `-`)",
            )),
            (Some(_), ChannelType::Messenger | ChannelType::Instagram) => errors
                .push(FieldError::new("credentials.waba_id", format!("does not apply to {channel_type} channels"))),
            _ => {}
        }
        match &self.access_token {
            Some(v) if secret_ok(v) => {}
            Some(_) => {
                errors.push(FieldError::new("credentials.access_token", "must be 8 to 512 visible ASCII characters"))
            }
            None => errors.push(FieldError::new("credentials.access_token", "is required")),
        }
        for (name, v) in [("app_secret", &self.app_secret), ("verify_token", &self.verify_token)] {
            if v.as_deref().is_some_and(|v| !secret_ok(v)) {
                errors
                    .push(FieldError::new(format!("credentials.{name}"), "must be 8 to 512 visible ASCII characters"));
            }
        }
        if errors.is_empty() {
            Ok(self)
        } else {
            Err(ValidationErrors(errors))
        }
    }

    /// The platform account id that routes callbacks to the channel.
    pub fn account_id(&self) -> Option<&str> {
        self.phone_number_id.as_deref().or(self.page_id.as_deref())
    }
}

/// A WhatsApp template send.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Template {
    /// Approved template name.
    pub name: String,
    /// Language code (`en_US`).
    pub language: String,
    /// Body parameters, in order.
    #[serde(default)]
    pub parameters: Vec<String>,
}

impl Template {
    /// Validates a template reference.
    ///
    /// # Errors
    /// [`ValidationErrors`] naming `template.<field>`.
    pub fn validate(self) -> Result<Self, ValidationErrors> {
        let mut errors = Vec::new();
        if self.name.is_empty()
            || self.name.len() > 512
            || !self.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            errors.push(FieldError::new(
                "template.name",
                "must be the template's name: lowercase letters, digits and `_`",
            ));
        }
        // Meta's codes include digits (`es_419`); one unknown to the catalogue is refused naming
        // `template.name` by the catalogue check, like an unknown name.
        let lang_ok = (2..=15).contains(&self.language.len())
            && self.language.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !lang_ok {
            errors.push(FieldError::new("template.language", "must be a language code such as en_US"));
        }
        if self.parameters.len() > 20 || self.parameters.iter().any(|p| p.is_empty() || p.chars().count() > 1024) {
            errors.push(FieldError::new("template.parameters", "at most 20 parameters of 1 to 1024 characters"));
        }
        if errors.is_empty() {
            Ok(self)
        } else {
            Err(ValidationErrors(errors))
        }
    }
}

/// What a platform is asked to deliver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutboundContent {
    /// Free text.
    Text(String),
    /// An approved template (WhatsApp).
    Template(Template),
}

/// One send request to a platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboundRequest {
    /// Platform.
    pub channel_type: ChannelType,
    /// The channel's credentials.
    pub credentials: ChannelCredentials,
    /// Recipient: E.164 phone (WhatsApp) or the platform's user id.
    pub to: String,
    /// What to send.
    pub content: OutboundContent,
    /// The Meta message tag it goes out with (Messenger and Instagram).
    pub tag: Option<crate::messaging::window::MessageTag>,
}

/// How a platform answered a send that did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GatewayError {
    /// The platform refused the message for good (bad recipient, closed window, bad token): the
    /// message fails with this reason.
    #[error("{reason}")]
    Rejected {
        /// The platform's error, as a sentence with its code.
        reason: String,
    },
    /// The platform asks us to slow down: the channel pauses, the message waits.
    #[error("rate limited by the platform")]
    RateLimited {
        /// How long the platform asked to wait, if it said.
        retry_after_secs: Option<u64>,
    },
    /// A transport error, timeout or 5xx: try again later.
    #[error("{0}")]
    Transient(String),
}

/// A delivery status the platform reports for one of our messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusUpdate {
    /// The platform's message id (stored when the message was sent).
    pub platform_message_id: String,
    /// `sent`, `delivered`, `read` or `failed`.
    pub status: MessageStatus,
    /// When the platform says it happened.
    pub at: OffsetDateTime,
    /// The platform's error, for `failed`.
    pub error: Option<String>,
}

/// Messenger and Instagram report delivery and reading with a watermark: everything sent to the
/// contact up to that time has reached the status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatermarkUpdate {
    /// The contact's platform user id.
    pub contact: String,
    /// `delivered` or `read`.
    pub status: MessageStatus,
    /// Messages sent up to this time are covered.
    pub watermark: OffsetDateTime,
}

impl WatermarkUpdate {
    /// The statuses of the outbound messages up to the watermark that it moves on to its
    /// [`status`](Self::status): those the platform accepted, `sent` and `delivered` (a queued
    /// message has not reached the contact and a failed one never will; a read one is done).
    pub const MOVES: [MessageStatus; 2] = [MessageStatus::Sent, MessageStatus::Delivered];

    /// [`MOVES`](Self::MOVES) by stored name, for the query that finds the messages.
    pub fn moved_statuses() -> [&'static str; 2] {
        Self::MOVES.map(MessageStatus::as_str)
    }
}

/// A message a contact sent us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundMessage {
    /// The platform's message id (makes redelivered callbacks idempotent).
    pub platform_message_id: String,
    /// The sender: E.164 phone (WhatsApp) or platform user id.
    pub from: String,
    /// The sender's profile name, when the platform gives it.
    pub name: Option<String>,
    /// The text (a placeholder such as `[image]` for media).
    pub text: String,
    /// When it was sent.
    pub at: OffsetDateTime,
}

/// Everything one callback entry reports for one channel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlatformEvents {
    /// Delivery statuses of our messages.
    pub statuses: Vec<StatusUpdate>,
    /// Watermarked delivery/read reports.
    pub watermarks: Vec<WatermarkUpdate>,
    /// Messages from contacts.
    pub inbound: Vec<InboundMessage>,
}

/// Why credentials do not prove control of the platform account they name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    /// The platform refused the token for this account, or answered for another account: the
    /// credentials are wrong (422 naming `credentials`).
    #[error("{0}")]
    Refused(String),
    /// The platform could not be reached or failed (502).
    #[error("{0}")]
    Unreachable(String),
}

#[cfg(test)]
mod watermark_tests {
    use super::*;

    #[test]
    fn a_watermark_moves_only_messages_the_platform_accepted_and_not_yet_read() {
        let moved: Vec<MessageStatus> =
            MessageStatus::ALL.into_iter().filter(|s| WatermarkUpdate::MOVES.contains(s)).collect();
        assert_eq!(moved, [MessageStatus::Sent, MessageStatus::Delivered]);
        assert_eq!(WatermarkUpdate::moved_statuses(), ["sent", "delivered"]);
        // Every status it moves can still advance to what a watermark reports.
        for status in WatermarkUpdate::MOVES {
            assert!(crate::messaging::decide_advance(status, MessageStatus::Read).is_some(), "{status:?}");
        }
    }
}
