//! A destination's delivery figures and pace.

use std::time::Duration;

use super::{WebhookNotFound, WebhookService};
use crate::webhooks::model::DestinationId;
use crate::webhooks::stats::DestinationStats;
use crate::workspace::WorkspaceId;

/// The window of the figures when no `since` is given.
pub const DEFAULT_STATS_WINDOW: Duration = Duration::from_secs(24 * 3600);

impl WebhookService {
    /// The destination's figures since `since` (default: the last 24 hours) and its pace now.
    ///
    /// # Errors
    /// [`WebhookNotFound::NotFound`].
    pub async fn stats(
        &self,
        ws: WorkspaceId,
        id: DestinationId,
        since: Option<time::OffsetDateTime>,
    ) -> Result<DestinationStats, WebhookNotFound> {
        let now = self.engine.clock.now();
        let since = since.unwrap_or_else(|| now - DEFAULT_STATS_WINDOW);
        let facts = self.repo.stats(ws, id, since).await?.ok_or(WebhookNotFound::NotFound)?;
        Ok(facts.into_stats(since, self.engine.policy.limits.bounds(), now))
    }
}
