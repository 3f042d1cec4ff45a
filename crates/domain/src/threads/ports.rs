//! Storage port for threads.

use async_trait::async_trait;
use time::OffsetDateTime;

use super::model::{LabelNames, Thread, ThreadChange, ThreadFilter};
use crate::common::error::RepoError;
use crate::common::page::{Page, PageRequest};
use crate::workspace::WorkspaceId;

/// Why a thread could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum UpdateThreadError {
    /// Invalid fields.
    #[error(transparent)]
    Invalid(#[from] crate::common::error::ValidationErrors),
    /// Not a thread of this workspace.
    #[error("thread {0} not found")]
    NotFound(i64),
    /// The assignee is not an active member, team or active AI agent of this workspace.
    #[error("no {kind} {id} can take threads in this workspace")]
    UnknownAssignee {
        /// `user`, `team` or `ai_agent`.
        kind: &'static str,
        /// The id given.
        id: i64,
    },
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why threads could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum ListThreadsError {
    /// The `label` filter names no label of this workspace.
    #[error("no label named `{0}` in this workspace")]
    UnknownLabel(String),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a thread's labels could not be set.
#[derive(Debug, thiserror::Error)]
pub enum SetThreadLabelsError {
    /// Not a thread of this workspace.
    #[error("thread {0} not found")]
    NotFound(i64),
    /// Names that are no label of this workspace.
    #[error("no label named {} in this workspace; create labels with POST /v1/labels", .0.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "))]
    UnknownLabels(Vec<String>),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Threads of a workspace. Every method is scoped by the workspace.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ThreadRepository: Send + Sync {
    /// One thread.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn find(&self, ws: WorkspaceId, id: i64) -> Result<Option<Thread>, RepoError>;

    /// Applies a change at `now` in one transaction, as [`super::decide_status`] and
    /// [`super::decide_manual_assignment`] decide over the locked row, recording
    /// `thread.status_changed` when the status changes and `thread.assigned` when the assignee
    /// changes.
    ///
    /// # Errors
    /// [`UpdateThreadError`].
    async fn update(
        &self,
        ws: WorkspaceId,
        id: i64,
        change: &ThreadChange,
        now: OffsetDateTime,
    ) -> Result<Thread, UpdateThreadError>;

    /// A page of threads matching `filter`, newest (highest id) first, after the page's cursor.
    ///
    /// # Errors
    /// [`ListThreadsError`].
    async fn list(
        &self,
        ws: WorkspaceId,
        filter: &ThreadFilter,
        page: PageRequest,
    ) -> Result<Page<Thread>, ListThreadsError>;

    /// Replaces the thread's labels in one transaction, recording `thread.labels_changed` when
    /// the set changes (nothing when it is the same set).
    ///
    /// # Errors
    /// [`SetThreadLabelsError`].
    async fn set_labels(&self, ws: WorkspaceId, id: i64, labels: &LabelNames) -> Result<Thread, SetThreadLabelsError>;
}

/// The lifecycle's timed work over every workspace, safe on any number of instances (rows are
/// claimed with `FOR UPDATE SKIP LOCKED`; each change is committed with its event).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait LifecycleTimers: Send + Sync {
    /// Opens up to `limit` threads whose snooze has come by `now` ([`super::decide_snooze_expiry`]),
    /// each with one `thread.status_changed`; returns how many.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn expire_snoozes(&self, now: OffsetDateTime, limit: i64) -> Result<usize, RepoError>;

    /// Gives the teams' waiting threads to the members who can take them
    /// ([`crate::teams::assign_waiting`]), each with one `thread.assigned`; returns how many.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn serve_waiting(&self, now: OffsetDateTime) -> Result<usize, RepoError>;
}
