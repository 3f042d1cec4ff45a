//! The delivery log, manual redelivery and test (sample) sends: attempts made now, on request.
//!
//! A manual send is recorded in the transaction that claims or creates its delivery, before the
//! HTTP request, which no transaction covers. A refused send (unknown delivery, one in progress)
//! is never recorded; the payload and the signature never are (docs/product/audit-log.md).

use serde_json::json;

use super::{WebhookNotFound, WebhookService, NOT_FOUND};
use crate::audit::{AuditAction, AuditContext};
use crate::common::error::RepoError;
use crate::common::page::{Page, PageRequest};
use crate::webhooks::event_type::EventType;
use crate::webhooks::limiter::FullCap;
use crate::webhooks::model::{Delivery, DeliveryId, DestinationId};
use crate::webhooks::payload::{envelope, test_data};
use crate::webhooks::ports::ManualClaim;
use crate::workspace::WorkspaceId;

/// Why a delivery could not be sent again.
#[derive(Debug, thiserror::Error)]
pub enum RedeliverError {
    /// No such destination, or no such delivery of it, in this workspace.
    #[error("{}", NOT_FOUND)]
    NotFound,
    /// A worker is delivering it right now.
    #[error("an attempt of this delivery is in progress; try again in a moment")]
    InProgress,
    /// A cap of the destination's own is full; try again in `retry_after_secs`.
    #[error("the destination is at its cap: {cap}; try again in {retry_after_secs} s")]
    CapReached {
        /// The full cap.
        cap: FullCap,
        /// Whole seconds until a place frees, at least 1.
        retry_after_secs: u64,
    },
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a test (or sample) event could not be sent. Shared by [`WebhookService::send_test`] and
/// [`WebhookService::send_sample`]: a test send is the sample send of `webhook.test`.
#[derive(Debug, thiserror::Error)]
pub enum SendTestError {
    /// No such destination in this workspace.
    #[error("{}", NOT_FOUND)]
    NotFound,
    /// A cap of the destination's own is full; try again in `retry_after_secs`.
    #[error("the destination is at its cap: {cap}; try again in {retry_after_secs} s")]
    CapReached {
        /// The full cap.
        cap: FullCap,
        /// Whole seconds until a place frees, at least 1.
        retry_after_secs: u64,
    },
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

impl WebhookService {
    /// One page of the delivery log, newest first.
    ///
    /// # Errors
    /// [`WebhookNotFound::NotFound`].
    pub async fn deliveries(
        &self,
        ws: WorkspaceId,
        id: DestinationId,
        page: PageRequest,
    ) -> Result<Page<Delivery>, WebhookNotFound> {
        self.repo.deliveries(ws, id, page).await?.ok_or(WebhookNotFound::NotFound)
    }

    /// Delivers one event again now, with the same `webhook-id`, and returns the delivery with
    /// the new attempt. The destination's own caps hold for it as for every delivery.
    ///
    /// # Errors
    /// [`RedeliverError::NotFound`]; [`RedeliverError::InProgress`] while a worker is sending it;
    /// [`RedeliverError::CapReached`] while the destination's `max_in_flight` or
    /// `rate_limit_per_second` is full.
    pub async fn redeliver(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: DestinationId,
        delivery: DeliveryId,
    ) -> Result<Delivery, RedeliverError> {
        let now = self.engine.clock.now();
        let limits = self.engine.policy.limits;
        let details = json!({ "delivery_id": delivery.0 });
        let entry = Self::entry(ws, audit, Some(id), AuditAction::WebhookDeliveryRetried, details);
        let claim = match self.engine.queue.claim_manual(ws, id, delivery, now, limits, &entry).await? {
            ManualClaim::Claimed(c) => c,
            ManualClaim::NotFound => return Err(RedeliverError::NotFound),
            ManualClaim::InProgress => return Err(RedeliverError::InProgress),
            ManualClaim::CapReached(c) => {
                return Err(RedeliverError::CapReached { cap: c.cap, retry_after_secs: c.retry_after_secs(now) })
            }
        };
        self.engine.deliver_now(&claim).await?;
        self.repo.delivery(ws, id, delivery).await?.ok_or(RedeliverError::NotFound)
    }

    /// Sends a signed `webhook.test` event now and returns its delivery with the attempt.
    ///
    /// # Errors
    /// [`SendTestError::NotFound`].
    pub async fn send_test(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: DestinationId,
    ) -> Result<Delivery, SendTestError> {
        self.send_sample(ws, audit, id, EventType::WebhookTest, &test_data(id)).await
    }

    /// Sends a signed sample event of type `event` with `data` to the destination now (also
    /// when it is inactive): what an integrator's endpoint will receive, without causing the
    /// change. Samples are not in the events feed, not retried and not replayed. The destination's
    /// own caps hold for it as for every delivery.
    ///
    /// # Errors
    /// [`SendTestError::NotFound`] for another workspace's or a missing destination;
    /// [`SendTestError::CapReached`] while its `max_in_flight` or `rate_limit_per_second` is full
    /// (nothing is recorded then).
    pub async fn send_sample(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: DestinationId,
        event: EventType,
        data: &serde_json::Value,
    ) -> Result<Delivery, SendTestError> {
        let now = self.engine.clock.now();
        let payload = envelope(event, now, ws, data);
        let limits = self.engine.policy.limits;
        // The queue adds the new delivery's id (`delivery_id`) to the details.
        let details = json!({ "event_type": event.as_str() });
        let entry = Self::entry(ws, audit, Some(id), AuditAction::WebhookTestSent, details);
        let claim = match self.engine.queue.create_test(ws, id, event, &payload, now, limits, &entry).await? {
            ManualClaim::Claimed(c) => c,
            ManualClaim::NotFound | ManualClaim::InProgress => return Err(SendTestError::NotFound),
            ManualClaim::CapReached(c) => {
                return Err(SendTestError::CapReached { cap: c.cap, retry_after_secs: c.retry_after_secs(now) })
            }
        };
        self.engine.deliver_now(&claim).await?;
        self.repo.delivery(ws, id, claim.delivery_id).await?.ok_or(SendTestError::NotFound)
    }
}
