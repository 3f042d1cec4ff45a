//! Reading and setting a workspace's business hours. The route's action has been allowed by the
//! policy already.

use std::sync::Arc;

use async_trait::async_trait;

use super::record::BusinessHoursRecord;
use super::schedule::BusinessHours;
use crate::audit::{AuditAction, AuditContext, AuditEntry, AuditTarget};
use crate::common::error::{RepoError, ValidationErrors};
use crate::workspace::WorkspaceId;

/// Why business hours could not be set.
#[derive(Debug, thiserror::Error)]
pub enum SetBusinessHoursError {
    /// Invalid fields (`timezone`, `days`, `holidays`).
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Where a workspace's business hours are kept.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait BusinessHoursRepo: Send + Sync {
    /// The stored record; `None` when the workspace has set none.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn get(&self, ws: WorkspaceId) -> Result<Option<BusinessHoursRecord>, RepoError>;

    /// Replaces the record and stores `audit` in the same transaction; every business time
    /// figure stored for the workspace before it is then brought in line with the new hours
    /// (within the call as far as it has time, the rest soon after, in the background).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn set(&self, ws: WorkspaceId, record: &BusinessHoursRecord, audit: &AuditEntry) -> Result<(), RepoError>;
}

/// The business hours use cases.
#[derive(Clone)]
pub struct BusinessHoursService {
    repo: Arc<dyn BusinessHoursRepo>,
}

impl std::fmt::Debug for BusinessHoursService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BusinessHoursService").finish_non_exhaustive()
    }
}

impl BusinessHoursService {
    /// The service over its storage.
    pub fn new(repo: Arc<dyn BusinessHoursRepo>) -> Self {
        Self { repo }
    }

    /// The workspace's record; [`BusinessHoursRecord::none_set`] when it has set none.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn get(&self, ws: WorkspaceId) -> Result<BusinessHoursRecord, RepoError> {
        Ok(self.repo.get(ws).await?.unwrap_or_else(BusinessHoursRecord::none_set))
    }

    /// Validates and stores a record (audited as `business_hours.updated`).
    ///
    /// # Errors
    /// [`SetBusinessHoursError::Invalid`] naming each bad field.
    pub async fn set(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        mut record: BusinessHoursRecord,
    ) -> Result<BusinessHoursRecord, SetBusinessHoursError> {
        BusinessHours::from_record(&record)?;
        record.timezone = record.timezone.trim().to_owned();
        let details = serde_json::to_value(&record).unwrap_or_default();
        let entry = audit.entry(ws, AuditAction::BusinessHoursUpdated, AuditTarget::workspace(ws), details);
        self.repo.set(ws, &record, &entry).await?;
        Ok(record)
    }
}

impl BusinessHours {
    /// The hours of a stored record (`None`: none set). A stored record was valid when stored; one
    /// that no longer is (a zone dropped from the tz database) counts every hour rather than fail
    /// a report or a message.
    pub fn from_stored(record: Option<&BusinessHoursRecord>) -> Self {
        record.and_then(|r| Self::from_record(r).ok()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Actor;

    #[tokio::test]
    async fn an_invalid_record_is_refused_before_storage() {
        let mut repo = MockBusinessHoursRepo::new();
        repo.expect_set().never();
        let service = BusinessHoursService::new(Arc::new(repo));
        let bad = BusinessHoursRecord { timezone: "Nowhere".into(), ..BusinessHoursRecord::none_set() };
        let audit = AuditContext::new(Actor::Operator, None, None, None);
        let err = service.set(WorkspaceId(1), &audit, bad).await.expect_err("invalid");
        assert!(matches!(err, SetBusinessHoursError::Invalid(e) if e.0[0].field == "timezone"));
    }

    #[tokio::test]
    async fn none_set_reads_as_the_empty_record() {
        let mut repo = MockBusinessHoursRepo::new();
        repo.expect_get().returning(|_| Ok(None));
        let service = BusinessHoursService::new(Arc::new(repo));
        assert_eq!(service.get(WorkspaceId(1)).await.expect("read"), BusinessHoursRecord::none_set());
    }
}
