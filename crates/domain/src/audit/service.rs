//! Reading the audit log.

use std::sync::Arc;

use super::model::{AuditEvent, AuditFilter};
use super::ports::AuditRepository;
use crate::common::error::RepoError;
use crate::common::page::{Page, PageRequest};
use crate::workspace::WorkspaceId;

/// The audit-log use cases (the route's policy entry, `audit.read`, has allowed the caller).
#[derive(Clone)]
pub struct AuditService {
    repo: Arc<dyn AuditRepository>,
}

impl std::fmt::Debug for AuditService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditService").finish_non_exhaustive()
    }
}

impl AuditService {
    /// The service over its port.
    pub fn new(repo: Arc<dyn AuditRepository>) -> Self {
        Self { repo }
    }

    /// One page of the workspace's records, newest first.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn list(
        &self,
        ws: WorkspaceId,
        filter: &AuditFilter,
        page: PageRequest,
    ) -> Result<Page<AuditEvent>, RepoError> {
        self.repo.list(ws, filter, page).await
    }

    /// Deletes the records older than `before`.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn prune(&self, before: time::OffsetDateTime) -> Result<u64, RepoError> {
        self.repo.prune(before).await
    }
}
