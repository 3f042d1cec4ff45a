//! Storage port of the audit log.

use async_trait::async_trait;
use time::OffsetDateTime;

use super::model::{AuditEntry, AuditEvent, AuditFilter};
use crate::common::error::RepoError;
use crate::common::page::{Page, PageRequest};
use crate::workspace::WorkspaceId;

/// The audit log. Records of changes are written by the repositories that make the changes (in
/// their transaction); this port reads, prunes, and records the events that change nothing else
/// (a failed sign-in).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait AuditRepository: Send + Sync {
    /// Stores records of events that are not part of another change.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn record(&self, entries: &[AuditEntry]) -> Result<(), RepoError>;

    /// One page of the workspace's records, newest first, matching `filter`.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn list(
        &self,
        ws: WorkspaceId,
        filter: &AuditFilter,
        page: PageRequest,
    ) -> Result<Page<AuditEvent>, RepoError>;

    /// Deletes every record older than `before` (all workspaces); returns how many.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn prune(&self, before: OffsetDateTime) -> Result<u64, RepoError>;
}
