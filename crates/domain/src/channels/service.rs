//! Channel rules.

use super::model::{ChannelStatus, ChannelType, NewChannel};
use crate::common::error::{FieldError, ValidationErrors};
use crate::common::text::bounded;

/// Raw input of a new channel.
#[derive(Debug, Clone, Default)]
pub struct ChannelInput {
    /// `whatsapp`, `messenger` or `instagram`.
    pub channel_type: String,
    /// Display name.
    pub display_name: String,
    /// Phone number or platform id.
    pub identifier: String,
    /// Optional status, default `active`.
    pub status: Option<String>,
}

/// Validates every field, reporting all the bad ones at once.
///
/// # Errors
/// [`ValidationErrors`] naming each invalid field.
pub fn validate_new_channel(input: &ChannelInput) -> Result<NewChannel, ValidationErrors> {
    let mut errors = ValidationErrors::default();
    let channel_type = errors.check(input.channel_type.parse::<ChannelType>());
    let display_name = errors.check(bounded("display_name", &input.display_name, 1, 100));
    let identifier = match channel_type {
        Some(t) => errors.check(t.validate_identifier(&input.identifier)),
        None if input.identifier.trim().is_empty() => {
            errors.0.push(FieldError::new("identifier", "must not be empty"));
            None
        }
        None => None,
    };
    let status = match &input.status {
        Some(s) => errors.check(s.parse::<ChannelStatus>()),
        None => Some(ChannelStatus::Active),
    };
    match (channel_type, display_name, identifier, status) {
        (Some(channel_type), Some(display_name), Some(identifier), Some(status)) if errors.0.is_empty() => {
            Ok(NewChannel { channel_type, display_name, identifier, status })
        }
        _ => Err(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(t: &str, id: &str) -> ChannelInput {
        ChannelInput { channel_type: t.into(), display_name: "Support".into(), identifier: id.into(), status: None }
    }

    #[test]
    fn whatsapp_number_is_normalised_and_status_defaults_to_active() {
        let c = validate_new_channel(&input("whatsapp", "+1 415 555 0101")).expect("valid");
        assert_eq!(c.identifier, "+14155550101");
        assert_eq!(c.status, ChannelStatus::Active);
    }

    #[test]
    fn every_bad_field_is_reported() {
        let bad = ChannelInput { channel_type: "sms".into(), display_name: "".into(), identifier: "".into(), status: Some("on".into()) };
        let fields: Vec<String> = validate_new_channel(&bad).expect_err("invalid").0.into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["channel_type", "display_name", "identifier", "status"]);
    }

    #[test]
    fn identifier_is_checked_per_platform() {
        assert!(validate_new_channel(&input("whatsapp", "12345")).is_err());
        assert!(validate_new_channel(&input("messenger", "104829301928374")).is_ok());
    }
}
