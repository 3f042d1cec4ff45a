//! Reveal and rotate a destination's signing secret.

use serde_json::json;

use super::{WebhookService, NOT_FOUND, ROTATION_OVERLAP};
use crate::audit::{AuditAction, AuditContext};
use crate::common::error::RepoError;
use crate::webhooks::model::DestinationId;
use crate::webhooks::signing::SigningSecret;
use crate::workspace::WorkspaceId;

/// Why the signing secret could not be revealed.
#[derive(Debug, thiserror::Error)]
pub enum RevealSecretError {
    /// No such destination in this workspace.
    #[error("{}", NOT_FOUND)]
    NotFound,
    /// The stored secret does not open with the configured keys: altered, sealed for another row
    /// or workspace, or with a key no longer configured.
    #[error("the signing secret stored for this destination cannot be opened with the configured keys; rotate the secret to get a new one")]
    SecretUnreadable,
    /// Infrastructure failure (also a secret that opens but is not one).
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why the signing secret could not be rotated.
#[derive(Debug, thiserror::Error)]
pub enum RotateSecretError {
    /// No such destination in this workspace.
    #[error("{}", NOT_FOUND)]
    NotFound,
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

impl WebhookService {
    /// The current signing secret (the viewing is recorded).
    ///
    /// # Errors
    /// [`RevealSecretError::NotFound`]; [`RevealSecretError::SecretUnreadable`] when the stored
    /// secret cannot be decrypted.
    pub async fn secret(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: DestinationId,
    ) -> Result<SigningSecret, RevealSecretError> {
        let entry = Self::entry(ws, audit, Some(id), AuditAction::WebhookSecretViewed, json!({}));
        let stored = self.repo.secrets(ws, id, Some(&entry)).await?.ok_or(RevealSecretError::NotFound)?;
        let plain = self
            .engine
            .cipher
            .open(&stored.current, &Self::secret_place(ws, id))
            .map_err(|_| RevealSecretError::SecretUnreadable)?;
        let text = String::from_utf8(plain).map_err(RepoError::new)?;
        Ok(SigningSecret::parse(&text).map_err(RepoError::new)?)
    }

    /// Replaces the secret; the old one keeps signing for [`ROTATION_OVERLAP`].
    ///
    /// # Errors
    /// [`RotateSecretError::NotFound`].
    pub async fn rotate_secret(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: DestinationId,
    ) -> Result<SigningSecret, RotateSecretError> {
        let secret = SigningSecret::generate(self.engine.random.as_ref());
        let sealed = self.engine.cipher.seal(secret.expose().as_bytes(), &Self::secret_place(ws, id));
        let now = self.engine.clock.now();
        let entry = Self::entry(ws, audit, Some(id), AuditAction::WebhookSecretRotated, json!({}));
        if self.repo.rotate_secret(ws, id, &sealed, now + ROTATION_OVERLAP, now, &entry).await? {
            Ok(secret)
        } else {
            Err(RotateSecretError::NotFound)
        }
    }
}
