//! The conversation report use case. The route's action has been allowed by the policy already.

use std::sync::Arc;

use super::distribution::{first_response_distribution, FirstResponseDistribution};
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

/// Why the first response distribution could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DistributionError {
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

    /// How the first response times of the query's period spread over the buckets of
    /// [`super::distribution::BUCKET_LABELS`], members and AI agents apart, for the whole
    /// workspace (the grouping is validated, then ignored).
    ///
    /// # Errors
    /// [`DistributionError::Invalid`] naming each bad field.
    pub async fn first_response_distribution(
        &self,
        ws: WorkspaceId,
        raw: &RawReportQuery,
    ) -> Result<FirstResponseDistribution, DistributionError> {
        let query = ReportQuery::parse(raw, self.clock.now())?;
        let durations = self.facts.first_response_durations(ws, query).await?;
        Ok(first_response_distribution(&durations))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::ports::MockClock;
    use crate::reports::{FirstResponseDurations, MockConversationFacts};

    fn service(facts: MockConversationFacts) -> ReportsService {
        let mut clock = MockClock::new();
        clock.expect_now().returning(|| time::macros::datetime!(2026-11-27 12:00 UTC));
        ReportsService::new(Arc::new(facts), Arc::new(clock))
    }

    #[tokio::test]
    async fn the_distribution_buckets_the_durations_of_the_parsed_period() {
        let mut facts = MockConversationFacts::new();
        facts
            .expect_first_response_durations()
            .withf(|ws, q| *ws == WorkspaceId(4) && q.business_hours && q.until.day() == 27)
            .times(1)
            .returning(|_, _| Ok(FirstResponseDurations { human: vec![10, 400], ai: vec![90_000] }));
        let raw = RawReportQuery { business_hours: Some("true".into()), ..RawReportQuery::default() };
        let d = service(facts).first_response_distribution(WorkspaceId(4), &raw).await.expect("distribution");
        assert_eq!(d.totals(), (2, 1));
        assert_eq!((d.buckets[0].human, d.buckets[2].human, d.buckets[6].ai), (1, 1, 1));
    }

    #[tokio::test]
    async fn a_bad_query_never_reaches_the_storage() {
        let mut facts = MockConversationFacts::new();
        facts.expect_first_response_durations().never();
        let raw = RawReportQuery { since: Some("soon".into()), ..RawReportQuery::default() };
        let e = service(facts).first_response_distribution(WorkspaceId(4), &raw).await.expect_err("invalid");
        assert!(matches!(e, DistributionError::Invalid(v) if v.0[0].field == "since"));
    }
}
