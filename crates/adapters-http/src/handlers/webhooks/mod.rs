//! `/v1/webhooks` and `/api/workspaces/{workspace_id}/webhooks`: the same operations and bodies
//! for API callers (advanced plan) and for admins on the settings pages (growth and above). Each
//! action file has one `run` with the logic and two thin entry points, `v1` and `settings`. The
//! records are in [`crate::dto::webhooks`].

pub mod create;
pub mod delete;
pub mod deliveries;
pub mod get;
pub mod list;
pub mod replay;
pub mod retry;
pub mod rotate;
pub mod secret;
pub mod test;
pub mod update;

use serde::Deserialize;

/// The `{webhook_id}` path segment (the settings routes also carry `{workspace_id}`, which the
/// [`Member`] extractor has checked).
#[derive(Debug, Deserialize)]
pub struct WebhookPath {
    /// The destination.
    pub webhook_id: i64,
}

/// The `{webhook_id}/deliveries/{delivery_id}` path segments.
#[derive(Debug, Deserialize)]
pub struct DeliveryPath {
    /// The destination.
    pub webhook_id: i64,
    /// The delivery.
    pub delivery_id: i64,
}
