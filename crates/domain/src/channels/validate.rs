//! Channel rules: validating input (credentials sealed for their row) and the audit records of a
//! change. [`super::ChannelsService`] applies them.

use super::model::{ChannelChange, ChannelId, ChannelStatus, ChannelType, NewChannel, SealedCredentials};
use crate::audit::{AuditAction, AuditContext, AuditEntry, AuditTarget};
use crate::common::error::{FieldError, ValidationErrors};
use crate::common::ports::{SecretCipher, SecretPlace};
use crate::common::text::bounded;
use crate::connectors::{seal_credentials, verify_token_digest, ChannelCredentials};
use crate::workspace::WorkspaceId;

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
    /// Optional platform credentials.
    pub credentials: Option<ChannelCredentials>,
    /// Optional default team (a team of the workspace).
    pub default_team_id: Option<i64>,
}

/// Raw input of a channel change.
#[derive(Debug, Clone, Default)]
pub struct ChannelChangeInput {
    /// New display name.
    pub display_name: Option<String>,
    /// New status.
    pub status: Option<String>,
    /// New credentials.
    pub credentials: Option<ChannelCredentials>,
    /// New default team (`Some(None)`: none).
    pub default_team_id: Option<Option<i64>>,
}

/// The record of a new channel (the repository fills in its id); never its credentials.
pub(crate) fn channel_created_entry(ws: WorkspaceId, audit: &AuditContext, new: &NewChannel) -> AuditEntry {
    audit.entry(
        ws,
        AuditAction::ChannelCreated,
        AuditTarget::channel(None),
        serde_json::json!({
            "channel_type": new.channel_type.as_str(),
            "identifier": new.identifier,
            "credentials": new.credentials.is_some(),
        }),
    )
}

/// The records of a change: `channel.updated` naming the changed fields, and
/// `channel.credentials_changed` when the credentials were replaced (never their values).
pub(crate) fn channel_change_entries(
    ws: WorkspaceId,
    audit: &AuditContext,
    id: ChannelId,
    change: &ChannelChange,
) -> Vec<AuditEntry> {
    let target = AuditTarget::channel(Some(id.0));
    let fields: Vec<&str> = [
        ("display_name", change.display_name.is_some()),
        ("status", change.status.is_some()),
        ("default_team_id", change.default_team_id.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, changed)| changed.then_some(name))
    .collect();
    let mut entries = Vec::new();
    if !fields.is_empty() || change.credentials.is_none() {
        entries.push(audit.entry(ws, AuditAction::ChannelUpdated, target, serde_json::json!({ "fields": fields })));
    }
    if change.credentials.is_some() {
        entries.push(audit.entry(ws, AuditAction::ChannelCredentialsChanged, target, serde_json::json!({})));
    }
    entries
}

fn seal(
    errors: &mut ValidationErrors,
    cipher: &dyn SecretCipher,
    place: &SecretPlace,
    channel_type: ChannelType,
    credentials: Option<ChannelCredentials>,
) -> Option<SealedCredentials> {
    let c = credentials?;
    match c.validate(channel_type) {
        Ok(c) => Some(SealedCredentials {
            sealed: seal_credentials(cipher, &c, place),
            account_id: c.account_id().unwrap_or_default().to_owned(),
            verify_token_digest: c.verify_token.as_deref().map(verify_token_digest),
            waba_id: c.waba_id.clone(),
        }),
        Err(e) => {
            errors.0.extend(e.0);
            None
        }
    }
}

/// Validates a change of channel `id` of workspace `ws`, of `channel_type`, sealing new
/// credentials for that row.
///
/// # Errors
/// [`ValidationErrors`] naming each invalid field.
pub fn validate_channel_change(
    ws: WorkspaceId,
    id: ChannelId,
    channel_type: ChannelType,
    input: ChannelChangeInput,
    cipher: &dyn SecretCipher,
) -> Result<ChannelChange, ValidationErrors> {
    let mut errors = ValidationErrors::default();
    let display_name = input.display_name.as_deref().and_then(|n| errors.check(bounded("display_name", n, 1, 100)));
    let status = input.status.as_deref().and_then(|s| errors.check(s.parse::<ChannelStatus>()));
    let place = SecretPlace::channel_credentials(ws.0, id.0);
    let credentials = seal(&mut errors, cipher, &place, channel_type, input.credentials);
    errors.clone().into_result()?;
    let change = ChannelChange { display_name, status, credentials, default_team_id: input.default_team_id };
    if change == ChannelChange::default() {
        return Err(ValidationErrors::one(
            "body",
            "give at least one of display_name, status, credentials, default_team_id",
        ));
    }
    Ok(change)
}

/// Validates every field of the new channel `id` (reserved with
/// [`super::ChannelRepository::reserve_id`]) of workspace `ws`, reporting all the bad ones at
/// once; credentials are sealed for that row.
///
/// # Errors
/// [`ValidationErrors`] naming each invalid field.
pub fn validate_new_channel(
    ws: WorkspaceId,
    id: ChannelId,
    input: &ChannelInput,
    cipher: &dyn SecretCipher,
) -> Result<NewChannel, ValidationErrors> {
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
    let place = SecretPlace::channel_credentials(ws.0, id.0);
    let credentials = channel_type.and_then(|t| seal(&mut errors, cipher, &place, t, input.credentials.clone()));
    match (channel_type, display_name, identifier, status) {
        (Some(channel_type), Some(display_name), Some(identifier), Some(status)) if errors.0.is_empty() => {
            Ok(NewChannel {
                id,
                channel_type,
                display_name,
                identifier,
                status,
                credentials,
                default_team_id: input.default_team_id,
            })
        }
        _ => Err(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::common::ports::MockSecretCipher;

    fn input(t: &str, id: &str) -> ChannelInput {
        ChannelInput {
            channel_type: t.into(),
            display_name: "Support".into(),
            identifier: id.into(),
            status: None,
            credentials: None,
            default_team_id: None,
        }
    }

    fn cipher() -> MockSecretCipher {
        let mut c = MockSecretCipher::new();
        c.expect_seal().returning(|p, _| p.iter().rev().copied().collect());
        c
    }

    #[test]
    fn whatsapp_number_is_normalised_and_status_defaults_to_active() {
        let c = validate_new_channel(WorkspaceId(1), ChannelId(1), &input("whatsapp", "+1 415 555 0101"), &cipher())
            .expect("valid");
        assert_eq!(c.identifier, "+14155550101");
        assert_eq!(c.status, ChannelStatus::Active);
    }

    #[test]
    fn every_bad_field_is_reported() {
        let bad = ChannelInput {
            channel_type: "sms".into(),
            display_name: "".into(),
            identifier: "".into(),
            status: Some("on".into()),
            credentials: None,
            default_team_id: None,
        };
        let fields: Vec<String> = validate_new_channel(WorkspaceId(1), ChannelId(1), &bad, &cipher())
            .expect_err("invalid")
            .0
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["channel_type", "display_name", "identifier", "status"]);
    }

    #[test]
    fn credentials_are_sealed_with_their_routing_parts() {
        let creds = ChannelCredentials {
            phone_number_id: Some("109876".into()),
            access_token: Some("EAAG-token-1".into()),
            verify_token: Some("verify-me-1".into()),
            ..ChannelCredentials::default()
        };
        let i = ChannelInput { credentials: Some(creds), ..input("whatsapp", "+14155550101") };
        let c = validate_new_channel(WorkspaceId(1), ChannelId(1), &i, &cipher())
            .expect("valid")
            .credentials
            .expect("sealed");
        assert_eq!(c.account_id, "109876");
        assert_eq!(c.verify_token_digest, Some(verify_token_digest("verify-me-1")));
        assert!(!String::from_utf8_lossy(&c.sealed).contains("EAAG-token-1"));
    }

    #[test]
    fn an_empty_change_is_refused() {
        let e = validate_channel_change(
            WorkspaceId(1),
            ChannelId(1),
            ChannelType::Whatsapp,
            ChannelChangeInput::default(),
            &cipher(),
        )
        .expect_err("empty");
        assert_eq!(e.0[0].field, "body");
    }

    #[test]
    fn identifier_is_checked_per_platform() {
        assert!(validate_new_channel(WorkspaceId(1), ChannelId(1), &input("whatsapp", "12345"), &cipher()).is_err());
        assert!(validate_new_channel(WorkspaceId(1), ChannelId(1), &input("messenger", "104829301928374"), &cipher())
            .is_ok());
    }
}
