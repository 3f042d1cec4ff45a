//! The threads use cases for integrators (`decisions.md`, "Integrator resources"): read one,
//! list with filters, change status and assignee, replace the labels. The route's action has been
//! allowed by the policy already.

use std::sync::Arc;

use super::model::{LabelNames, Thread, ThreadChange, ThreadFilter};
use super::ports::{ListThreadsError, SetThreadLabelsError, ThreadRepository, UpdateThreadError};
use crate::common::error::RepoError;
use crate::common::page::{Page, PageRequest};
use crate::workspace::WorkspaceId;

/// Why a thread could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GetThreadError {
    /// Not a thread of this workspace.
    #[error("thread {0} not found")]
    NotFound(i64),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// The threads use cases.
#[derive(Clone)]
pub struct ThreadsService {
    repo: Arc<dyn ThreadRepository>,
}

impl std::fmt::Debug for ThreadsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadsService").finish_non_exhaustive()
    }
}

impl ThreadsService {
    /// The service over its storage.
    pub fn new(repo: Arc<dyn ThreadRepository>) -> Self {
        Self { repo }
    }

    /// One thread of the workspace.
    ///
    /// # Errors
    /// [`GetThreadError`].
    pub async fn get(&self, ws: WorkspaceId, id: i64) -> Result<Thread, GetThreadError> {
        self.repo.find(ws, id).await?.ok_or(GetThreadError::NotFound(id))
    }

    /// A page of the workspace's threads, newest first.
    ///
    /// # Errors
    /// [`ListThreadsError`].
    pub async fn list(
        &self,
        ws: WorkspaceId,
        filter: &ThreadFilter,
        page: PageRequest,
    ) -> Result<Page<Thread>, ListThreadsError> {
        self.repo.list(ws, filter, page).await
    }

    /// Changes status or assignee.
    ///
    /// # Errors
    /// [`UpdateThreadError`].
    pub async fn update(&self, ws: WorkspaceId, id: i64, change: &ThreadChange) -> Result<Thread, UpdateThreadError> {
        self.repo.update(ws, id, change).await
    }

    /// Replaces the thread's labels by `labels` (names of existing labels).
    ///
    /// # Errors
    /// [`SetThreadLabelsError`].
    pub async fn set_labels(
        &self,
        ws: WorkspaceId,
        id: i64,
        labels: &LabelNames,
    ) -> Result<Thread, SetThreadLabelsError> {
        self.repo.set_labels(ws, id, labels).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::threads::ports::MockThreadRepository;

    #[tokio::test]
    async fn a_missing_thread_is_not_found() {
        let mut repo = MockThreadRepository::new();
        repo.expect_find().returning(|_, _| Ok(None));
        let service = ThreadsService::new(Arc::new(repo));
        assert!(matches!(service.get(WorkspaceId(1), 7).await, Err(GetThreadError::NotFound(7))));
    }
}
