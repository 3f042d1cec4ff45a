//! Storage of the feed.

use async_trait::async_trait;

use super::model::{FeedPage, FeedQuery, ReplayWindow};
use crate::audit::AuditEntry;
use crate::common::error::RepoError;
use crate::webhooks::DestinationId;
use crate::workspace::WorkspaceId;

/// The workspace's events, as kept by the webhook outbox.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait EventStore: Send + Sync {
    /// A page of `ws`'s events after `query.after`, oldest first (samples never included).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn page(&self, ws: WorkspaceId, query: FeedQuery) -> Result<FeedPage, RepoError>;

    /// Queues again, oldest first and under the same `webhook-id`, every event of the window of
    /// a type `destination` subscribes to that it has not received successfully and that is not
    /// already on its way to it; returns how many, or `None` when the destination is not `ws`'s.
    /// When any is queued, `audit` (`webhook.replayed`) is stored in the same transaction with
    /// the count added as `queued`.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn replay(
        &self,
        ws: WorkspaceId,
        destination: DestinationId,
        window: &ReplayWindow,
        audit: &AuditEntry,
    ) -> Result<Option<u64>, RepoError>;
}
