//! What the report reads.

use async_trait::async_trait;

use super::distribution::FirstResponseDurations;
use super::report::{ConversationReport, ReportQuery};
use crate::common::error::RepoError;
use crate::workspace::WorkspaceId;

/// The stored conversation facts, aggregated.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ConversationFacts: Send + Sync {
    /// The report of `query` for `ws`.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn report(&self, ws: WorkspaceId, query: ReportQuery) -> Result<ConversationReport, RepoError>;

    /// The first response durations (by members and by AI agents) that happened in the query's
    /// period: business seconds when it counts only business hours, else wall seconds. The
    /// grouping is ignored.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn first_response_durations(
        &self,
        ws: WorkspaceId,
        query: ReportQuery,
    ) -> Result<FirstResponseDurations, RepoError>;
}
