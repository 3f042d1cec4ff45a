//! The destinations API: create, list, read, update, delete (`destinations.rs`), reveal and rotate
//! the secret (`secrets.rs`), read the delivery log, redeliver and send a test event
//! (`sends.rs`). Shared by `/v1/webhooks`, the settings API and the settings pages. Each operation
//! has its own error enum with only the failures it can have.

mod destinations;
mod secrets;
mod sends;
mod stats;
mod url_check;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

pub use destinations::{
    ControlsInput, CreateWebhookError, DeleteWebhookError, DestinationInput, DestinationPatch, UpdateWebhookError,
    WebhookNotFound,
};
pub use secrets::{RevealSecretError, RotateSecretError};
pub use sends::{RedeliverError, SendTestError};
pub use stats::DEFAULT_STATS_WINDOW;

use super::delivery::DeliveryEngine;
use super::model::{DestinationId, WebhookDestination};
use super::ports::{HostResolver, WebhookRepository};
use super::ssrf::AddressPolicy;
use crate::audit::{AuditAction, AuditContext, AuditEntry, AuditTarget};
use crate::common::ports::SecretPlace;
use crate::workspace::WorkspaceId;

/// How long the previous secret keeps signing after a rotation.
pub const ROTATION_OVERLAP: Duration = Duration::from_secs(24 * 3600);

/// The message of every webhooks "not found": a destination, or a delivery of it, that this
/// workspace does not have (another workspace's is not found either).
const NOT_FOUND: &str = "no such webhook destination or delivery in this workspace";

/// The webhooks use cases.
pub struct WebhookService {
    /// Destinations and the log.
    pub repo: Arc<dyn WebhookRepository>,
    /// DNS, for the creation-time address check.
    pub resolver: Arc<dyn HostResolver>,
    /// Sends manual and test attempts; also holds the cipher, clock and random source.
    pub engine: Arc<DeliveryEngine>,
    /// Which addresses destinations may have.
    pub addresses: AddressPolicy,
}

impl std::fmt::Debug for WebhookService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookService").field("addresses", &self.addresses).finish_non_exhaustive()
    }
}

impl WebhookService {
    /// The audit record of a change to destination `id` (`None`: one not created yet).
    fn entry(
        ws: WorkspaceId,
        audit: &AuditContext,
        id: Option<DestinationId>,
        action: AuditAction,
        details: serde_json::Value,
    ) -> AuditEntry {
        audit.entry(ws, action, AuditTarget::webhook(id.map(|i| i.0)), details)
    }

    /// `d` with its static header values opened, for answers to the workspace's webhook managers
    /// (who may read the signing secret too). Values that no longer open (the key changed) stay
    /// blank; the destination's deliveries then fail with a message saying to set them again.
    fn reveal(&self, mut d: WebhookDestination) -> WebhookDestination {
        if let Some(sealed) = &d.headers_sealed {
            if let Ok(headers) = super::headers::open(self.engine.cipher.as_ref(), d.workspace_id.0, d.id.0, sealed) {
                d.controls.headers = headers;
            }
        }
        d
    }

    /// Where the secret of destination `id` is sealed (the cipher binds it to the row).
    fn secret_place(ws: WorkspaceId, id: DestinationId) -> SecretPlace {
        SecretPlace::webhook_secret(ws.0, id.0)
    }
}
