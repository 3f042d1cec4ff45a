//! The conversation report use case. The route's action has been allowed by the policy already.

use std::sync::Arc;

use super::ports::ConversationFacts;
use super::report::{ConversationReport, RawReportQuery, ReportQuery};
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::ports::Clock;
use crate::workspace::WorkspaceId;

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A bad query field (`since`, `until`, `group_by`, `business_hours`).
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// The conversation reports.
#[derive(Clone)]
pub struct ReportsService {
    facts: Arc<dyn ConversationFacts>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for ReportsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReportsService").finish_non_exhaustive()
    }
}

impl ReportsService {
    /// The service over the stored facts.
    pub fn new(facts: Arc<dyn ConversationFacts>, clock: Arc<dyn Clock>) -> Self {
        Self { facts, clock }
    }

    /// The report of a query as received.
    ///
    /// # Errors
    /// [`ReportError::Invalid`] naming each bad field.
    pub async fn conversations(
        &self,
        ws: WorkspaceId,
        raw: &RawReportQuery,
    ) -> Result<ConversationReport, ReportError> {
        let query = ReportQuery::parse(raw, self.clock.now())?;
        Ok(self.facts.report(ws, query).await?)
    }
}
