//! Storage port for members.

use async_trait::async_trait;

use super::model::{MemberChange, MemberProfile};
use crate::common::error::RepoError;
use time::OffsetDateTime;

use super::service::AcceptedInvitation;
use crate::audit::AuditEntry;
use crate::auth::TokenDigest;
use crate::common::page::{Page, PageRequest};
use crate::common::ports::PasswordHash;
use crate::users::{Email, PersonName, Role, UserId};
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

/// A person to add to a workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMember {
    /// The workspace.
    pub workspace_id: WorkspaceId,
    /// Their e-mail: an existing account joins, otherwise one is created.
    pub email: Email,
    /// Their name in this workspace.
    pub name: PersonName,
    /// Their role.
    pub role: Role,
    /// A password for a new account (an existing account keeps its own).
    pub password_hash: Option<PasswordHash>,
    /// Stored when the person has no password yet (a new account without one, or an invited
    /// account that never accepted): the digest of the one-time link's token.
    pub invitation_digest: TokenDigest,
    /// When that link stops working.
    pub invitation_expires_at: OffsetDateTime,
}

/// A member just added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedRow {
    /// The member.
    pub profile: MemberProfile,
    /// Whether an invitation was stored (the person has no password yet).
    pub invited: bool,
}

/// Why a member could not be added.
#[derive(Debug, thiserror::Error)]
pub enum AddMemberError {
    /// Already a member of the workspace.
    #[error("already a member")]
    AlreadyMember,
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

    /// One page of the workspace's members, by user id.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<MemberProfile>, RepoError>;

    /// Adds the person in one transaction: the account if new, the membership, and the
    /// invitation when they have no password, and `audit` (its target id left to the user's).
    ///
    /// # Errors
    /// [`AddMemberError`].
    async fn add(&self, new: &NewMember, audit: &AuditEntry) -> Result<AddedRow, AddMemberError>;

    /// Whether the invitation with this digest is unused and unexpired at `now`.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn invitation_open(&self, digest: &TokenDigest, now: OffsetDateTime) -> Result<bool, RepoError>;

    /// Uses up an open invitation and sets the account's password, atomically (a link works
    /// once even when submitted twice at the same time); `None` when it is not open.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn accept_invitation(
        &self,
        digest: &TokenDigest,
        now: OffsetDateTime,
        password: &PasswordHash,
    ) -> Result<Option<AcceptedInvitation>, RepoError>;

    /// Applies a change atomically; refuses one that leaves no active admin (checked under a
    /// lock, so two concurrent demotions cannot both pass), storing `audit` with it (a role
    /// change's record gains the `previous_role`).
    ///
    /// # Errors
    /// [`ChangeMemberError`].
    async fn update(
        &self,
        ws: WorkspaceId,
        user: UserId,
        change: &MemberChange,
        audit: &[AuditEntry],
    ) -> Result<MemberProfile, ChangeMemberError>;

    /// Removes the membership (the user keeps their other workspaces); refuses removing the last
    /// active admin. `audit` is stored with the change.
    ///
    /// # Errors
    /// [`ChangeMemberError`].
    async fn remove(&self, ws: WorkspaceId, user: UserId, audit: &AuditEntry) -> Result<(), ChangeMemberError>;
}
