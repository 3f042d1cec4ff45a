//! Storage port for members.

use async_trait::async_trait;

use super::model::{MemberChange, MemberProfile};
use crate::common::error::RepoError;
use crate::users::UserId;
use crate::workspace::WorkspaceId;

/// Why a member could not be changed or removed.
#[derive(Debug, thiserror::Error)]
pub enum ChangeMemberError {
    /// Not a member of this workspace.
    #[error("user {0} not found")]
    NotFound(UserId),
    /// The change would leave the workspace without an active admin.
    #[error("the workspace must keep at least one active admin")]
    LastAdmin,
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Members of a workspace. Every method is scoped by the workspace.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait MemberRepository: Send + Sync {
    /// One member, `None` for someone outside the workspace.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn find(&self, ws: WorkspaceId, user: UserId) -> Result<Option<MemberProfile>, RepoError>;

    /// Applies a change atomically; refuses one that leaves no active admin (checked under a
    /// lock, so two concurrent demotions cannot both pass).
    ///
    /// # Errors
    /// [`ChangeMemberError`].
    async fn update(
        &self,
        ws: WorkspaceId,
        user: UserId,
        change: &MemberChange,
    ) -> Result<MemberProfile, ChangeMemberError>;

    /// Removes the membership (the user keeps their other workspaces); refuses removing the last
    /// active admin.
    ///
    /// # Errors
    /// [`ChangeMemberError`].
    async fn remove(&self, ws: WorkspaceId, user: UserId) -> Result<(), ChangeMemberError>;
}
