//! Storage port for workspaces.

use async_trait::async_trait;

use super::model::{PlanTier, Slug, Workspace, WorkspaceId, WorkspaceName};
use crate::common::error::RepoError;
use crate::common::ports::PasswordHash;
use crate::users::{Email, PersonName, UserId};

/// What the repository needs to create a workspace together with its first admin.
#[derive(Debug, Clone)]
pub struct NewWorkspace {
    /// Display name.
    pub name: WorkspaceName,
    /// Proposed unique handle.
    pub slug: Slug,
    /// Plan tier.
    pub plan: PlanTier,
    /// The admin's e-mail; an existing user with this e-mail is reused (and keeps their password).
    pub admin_email: Email,
    /// The admin's display name for a new user.
    pub admin_name: PersonName,
    /// The admin's password hash for a new user.
    pub admin_password_hash: PasswordHash,
}

/// The ids of what was created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreatedWorkspace {
    /// The workspace.
    pub workspace_id: WorkspaceId,
    /// Its admin user (new or existing).
    pub user_id: UserId,
    /// Whether the admin's membership is only invited: the account existed without a password of
    /// its own, and the operator's is never given to an existing account (the operator then sends
    /// the invitation, as `add-member` does).
    pub admin_invited: bool,
}

/// Why a workspace could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum InsertWorkspaceError {
    /// Another workspace already has this slug.
    #[error("slug `{0}` is taken")]
    SlugTaken(String),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a plan change failed.
#[derive(Debug, thiserror::Error)]
pub enum SetPlanError {
    /// No workspace has this id.
    #[error("workspace {0} not found")]
    NotFound(WorkspaceId),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Workspaces in storage.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait WorkspaceRepository: Send + Sync {
    /// Creates the workspace, its admin user (unless one exists with that e-mail) and the admin
    /// membership, atomically.
    ///
    /// # Errors
    /// [`InsertWorkspaceError::SlugTaken`] when the slug is in use.
    async fn insert_with_admin(&self, new: &NewWorkspace) -> Result<CreatedWorkspace, InsertWorkspaceError>;

    /// Changes the plan tier and stores `audit` with the change (its details gain the
    /// `previous_plan`), as [`crate::workspace::plan_change`] decides on the plan read with the
    /// row locked: a workspace that has the plan already is left as it is, unrecorded.
    ///
    /// # Errors
    /// [`SetPlanError::NotFound`] for an unknown id.
    async fn set_plan(
        &self,
        id: WorkspaceId,
        plan: PlanTier,
        audit: &crate::audit::AuditEntry,
    ) -> Result<Workspace, SetPlanError>;

    /// The workspace with this id.
    ///
    /// # Errors
    /// Only infrastructure failures.
    async fn find(&self, id: WorkspaceId) -> Result<Option<Workspace>, RepoError>;
}
