//! `/v1/webhooks` and `/api/workspaces/{workspace_id}/webhooks`: the same operations and bodies
//! for API callers (advanced plan) and for admins on the settings pages (growth and above). Each
//! handler reads the one caller ([`Authenticated`](crate::authentication::Authenticated), or
//! [`Acting`](crate::audit_context::Acting) for a write) whichever surface it came through, and
//! `routes.rs` registers the resources once per surface. The records are in
//! [`crate::dto::webhooks`].

pub mod create;
pub mod delete;
pub mod deliveries;
pub mod get;
pub mod list;
pub mod replay;
pub mod retry;
pub mod rotate;
pub mod secret;
pub mod stats;
pub mod test;
pub mod update;

use domain::common::page::PageRequest;
use domain::ValidationErrors;
use serde::Deserialize;

use crate::error::ApiError;
use crate::handlers::PageQuery;

/// The `{webhook_id}` path segment (the settings routes also carry `{workspace_id}`, which the
/// settings API's authentication has checked).
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

/// The validated page of a listing.
///
/// # Errors
/// 422 naming `limit` or `cursor`.
fn page(q: &PageQuery) -> Result<PageRequest, ApiError> {
    PageRequest::new(q.limit, q.cursor.as_deref()).map_err(|e| ApiError::Validation(ValidationErrors(e)))
}
