//! Ports of the webhooks area: destination storage (here), the delivery queue (`queue.rs`), name
//! resolution and the HTTP transport (`transport.rs`).

mod queue;
mod transport;

pub use queue::*;
pub use transport::*;

use std::collections::BTreeMap;

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::audit::AuditEntry;
use crate::common::error::RepoError;
use crate::common::page::{Page, PageRequest};
use crate::webhooks::controls::{DeliveryOrdering, DestinationControls, EventFilter};
use crate::webhooks::model::{Delivery, DeliveryId, DestinationId, WebhookDestination};
use crate::webhooks::stats::StatsFacts;
use crate::workspace::WorkspaceId;

/// A destination to store, validated, with its secret already sealed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDestination {
    /// Its id, reserved with [`WebhookRepository::reserve_id`] so the secret is sealed for the row.
    pub id: DestinationId,
    /// Normalised URL.
    pub url: String,
    /// Free label.
    pub platform: String,
    /// Subscribed event names.
    pub events: Vec<String>,
    /// Whether deliveries are sent.
    pub active: bool,
    /// The sealed `whsec_` secret.
    pub secret_sealed: Vec<u8>,
    /// Caps, headers, filter and ordering, validated; `headers` holds the names with blank values.
    pub controls: DestinationControls,
    /// The static header values, sealed ([`crate::webhooks::headers`]); `None` without headers.
    pub headers_sealed: Option<Vec<u8>>,
}

/// A validated partial update; `None` leaves a member unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DestinationChange {
    /// New URL.
    pub url: Option<String>,
    /// New label.
    pub platform: Option<String>,
    /// New subscriptions.
    pub events: Option<Vec<String>>,
    /// Activate (clears the deactivation note and resumes paused deliveries) or pause.
    pub active: Option<bool>,
    /// New rate cap (`Some(None)` clears it).
    pub rate_limit_per_second: Option<Option<u32>>,
    /// New in-flight cap (`Some(None)` clears it).
    pub max_in_flight: Option<Option<u32>>,
    /// New static headers, replacing the old ones: their names with blank values (stored as
    /// they are), the values being in `headers_sealed`.
    pub headers: Option<BTreeMap<String, String>>,
    /// The new static header values, sealed (`Some(None)`: no headers); set with `headers`.
    pub headers_sealed: Option<Option<Vec<u8>>>,
    /// New filter (`Some(None)` removes it).
    pub filter: Option<Option<EventFilter>>,
    /// New ordering.
    pub ordering: Option<DeliveryOrdering>,
}

/// A destination's sealed secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSecrets {
    /// The current secret.
    pub current: Vec<u8>,
    /// The secret before the last rotation and until when it still signs.
    pub previous: Option<(Vec<u8>, OffsetDateTime)>,
}

/// Destinations and their delivery log. Every method is scoped by the workspace, so another
/// workspace's destination is simply not found.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait WebhookRepository: Send + Sync {
    /// A new destination id, reserved so the secret can be sealed for the row before it is written.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn reserve_id(&self) -> Result<DestinationId, RepoError>;

    /// Stores a destination under its reserved id, with `audit` in the same transaction.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn insert(
        &self,
        ws: WorkspaceId,
        new: &NewDestination,
        audit: &AuditEntry,
    ) -> Result<WebhookDestination, RepoError>;

    /// One page of destinations, oldest first.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<WebhookDestination>, RepoError>;

    /// One destination.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn find(&self, ws: WorkspaceId, id: DestinationId) -> Result<Option<WebhookDestination>, RepoError>;

    /// Applies `change` at `now`; reactivation clears the deactivation note and resumes paused
    /// deliveries, deactivation pauses pending ones. `audit` is stored with the change.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn update(
        &self,
        ws: WorkspaceId,
        id: DestinationId,
        change: &DestinationChange,
        now: OffsetDateTime,
        audit: &AuditEntry,
    ) -> Result<Option<WebhookDestination>, RepoError>;

    /// Deletes a destination with its deliveries and stores `audit`; `false` when there was none.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn delete(&self, ws: WorkspaceId, id: DestinationId, audit: &AuditEntry) -> Result<bool, RepoError>;

    /// The sealed secrets; `audit` (a person viewing it) is stored when the destination exists.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn secrets<'a>(
        &self,
        ws: WorkspaceId,
        id: DestinationId,
        audit: Option<&'a AuditEntry>,
    ) -> Result<Option<StoredSecrets>, RepoError>;

    /// Makes `new_sealed` the current secret; the old one keeps signing until `previous_until`.
    /// `audit` is stored with the change.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn rotate_secret(
        &self,
        ws: WorkspaceId,
        id: DestinationId,
        new_sealed: &[u8],
        previous_until: OffsetDateTime,
        now: OffsetDateTime,
        audit: &AuditEntry,
    ) -> Result<bool, RepoError>;

    /// One page of the destination's deliveries, newest first, with their attempts; `None` when
    /// the destination does not exist.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn deliveries(
        &self,
        ws: WorkspaceId,
        id: DestinationId,
        page: PageRequest,
    ) -> Result<Option<Page<Delivery>>, RepoError>;

    /// One delivery with its attempts.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn delivery(
        &self,
        ws: WorkspaceId,
        id: DestinationId,
        delivery: DeliveryId,
    ) -> Result<Option<Delivery>, RepoError>;

    /// Of `channel_ids`, those that are not channels of the workspace (for the `filter` check).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn foreign_channels(&self, ws: WorkspaceId, channel_ids: &[i64]) -> Result<Vec<i64>, RepoError>;

    /// The facts of the destination's figures since `since` and its stored pace; `None` when
    /// the destination does not exist.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn stats(
        &self,
        ws: WorkspaceId,
        id: DestinationId,
        since: OffsetDateTime,
    ) -> Result<Option<StatsFacts>, RepoError>;
}
