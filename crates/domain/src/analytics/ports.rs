//! What the exports read beyond the assistant's live data.

use async_trait::async_trait;
use time::OffsetDateTime;

use super::model::TopCountries;
use crate::channels::ChannelId;
use crate::common::error::RepoError;
use crate::workspace::WorkspaceId;

/// Figures by contact country.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait CountryStats: Send + Sync {
    /// Messages and contacts by the contact's country over the `days` days ending today in the
    /// workspace's time zone, for one channel (any platform) or, when `channel` is `None`, every
    /// WhatsApp channel. `None` when the workspace has no such channel.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn top_countries(
        &self,
        ws: WorkspaceId,
        channel: Option<ChannelId>,
        days: u16,
        now: OffsetDateTime,
    ) -> Result<Option<TopCountries>, RepoError>;
}
