//! AI agents: the workspace's automated responders, which threads can be assigned to. Integrators
//! read them (`docs/contract.md`, "Integrator resources"); they are configured elsewhere.

use std::sync::Arc;

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::common::error::RepoError;
use crate::common::page::{Page, PageRequest};
use crate::workspace::WorkspaceId;

/// Every status an AI agent can have (the database allows these only).
pub const STATUSES: [&str; 2] = ["active", "draft"];

/// An AI agent as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AiAgent {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// `active` (may take threads) or `draft`.
    pub status: String,
    /// Creation time.
    pub created_at: OffsetDateTime,
}

/// Why an AI agent could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GetAiAgentError {
    /// Not an agent of this workspace.
    #[error("AI agent {0} not found")]
    NotFound(i64),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// AI agents of a workspace. Every method is scoped by the workspace.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait AiAgentRepository: Send + Sync {
    /// A page of agents, oldest first.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<AiAgent>, RepoError>;

    /// One agent.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn find(&self, ws: WorkspaceId, id: i64) -> Result<Option<AiAgent>, RepoError>;
}

/// The AI agents use cases.
#[derive(Clone)]
pub struct AiAgentsService {
    repo: Arc<dyn AiAgentRepository>,
}

impl std::fmt::Debug for AiAgentsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AiAgentsService").finish_non_exhaustive()
    }
}

impl AiAgentsService {
    /// The service over its storage.
    pub fn new(repo: Arc<dyn AiAgentRepository>) -> Self {
        Self { repo }
    }

    /// A page of the workspace's agents, oldest first.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<AiAgent>, RepoError> {
        self.repo.list(ws, page).await
    }

    /// One agent.
    ///
    /// # Errors
    /// [`GetAiAgentError`].
    pub async fn get(&self, ws: WorkspaceId, id: i64) -> Result<AiAgent, GetAiAgentError> {
        self.repo.find(ws, id).await?.ok_or(GetAiAgentError::NotFound(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn another_workspaces_agent_is_not_found() {
        let mut repo = MockAiAgentRepository::new();
        repo.expect_find().returning(|_, _| Ok(None));
        let service = AiAgentsService::new(Arc::new(repo));
        assert!(matches!(service.get(WorkspaceId(2), 5).await, Err(GetAiAgentError::NotFound(5))));
    }
}
