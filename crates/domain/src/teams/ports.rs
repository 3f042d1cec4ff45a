//! Storage port for teams.

use async_trait::async_trait;

use super::model::{NewTeam, Team, TeamChange};
use crate::audit::AuditEntry;
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::page::{Page, PageRequest};
use crate::workspace::WorkspaceId;

/// Why a team could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateTeamError {
    /// Invalid fields.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Another team has this name.
    #[error("a team named `{0}` exists in this workspace")]
    Duplicate(String),
    /// User ids that are no members of this workspace.
    #[error("not members of this workspace: {0:?}")]
    UnknownMembers(Vec<i64>),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a team could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum UpdateTeamError {
    /// Invalid fields.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Not a team of this workspace.
    #[error("team {0} not found")]
    NotFound(i64),
    /// Another team has this name.
    #[error("a team named `{0}` exists in this workspace")]
    Duplicate(String),
    /// User ids that are no members of this workspace.
    #[error("not members of this workspace: {0:?}")]
    UnknownMembers(Vec<i64>),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a team could not be read or deleted.
#[derive(Debug, thiserror::Error)]
pub enum TeamLookupError {
    /// Not a team of this workspace.
    #[error("team {0} not found")]
    NotFound(i64),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Teams of a workspace. Every method is scoped by the workspace.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait TeamRepository: Send + Sync {
    /// A page of teams, oldest first.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<Team>, RepoError>;

    /// One team.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn find(&self, ws: WorkspaceId, id: i64) -> Result<Option<Team>, RepoError>;

    /// Stores a new team with its members.
    ///
    /// # Errors
    /// [`CreateTeamError::Duplicate`], [`CreateTeamError::UnknownMembers`].
    async fn create(&self, ws: WorkspaceId, new: &NewTeam, audit: &AuditEntry) -> Result<Team, CreateTeamError>;

    /// Renames a team or replaces its members.
    ///
    /// # Errors
    /// [`UpdateTeamError`].
    async fn update(
        &self,
        ws: WorkspaceId,
        id: i64,
        change: &TeamChange,
        audit: &AuditEntry,
    ) -> Result<Team, UpdateTeamError>;

    /// Deletes a team in one transaction: the threads assigned to it become unassigned, each with
    /// `thread.assigned`.
    ///
    /// # Errors
    /// [`TeamLookupError::NotFound`].
    async fn delete(&self, ws: WorkspaceId, id: i64, audit: &AuditEntry) -> Result<(), TeamLookupError>;
}
