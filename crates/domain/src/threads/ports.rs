//! Storage port for threads.

use async_trait::async_trait;

use super::model::{Thread, ThreadChange};
use crate::common::error::RepoError;
use crate::workspace::WorkspaceId;

/// Why a thread could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum UpdateThreadError {
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

/// Threads of a workspace. Every method is scoped by the workspace.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ThreadRepository: Send + Sync {
    /// One thread.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn find(&self, ws: WorkspaceId, id: i64) -> Result<Option<Thread>, RepoError>;

    /// Applies a change in one transaction, recording `thread.status_changed` when the status
    /// changes and `thread.assigned` when the assignee changes.
    ///
    /// # Errors
    /// [`UpdateThreadError`].
    async fn update(&self, ws: WorkspaceId, id: i64, change: &ThreadChange) -> Result<Thread, UpdateThreadError>;
}
