//! Storage port for members.

use async_trait::async_trait;

use super::model::{MemberChange, MemberProfile, MemberStatus};
use crate::common::error::RepoError;
use crate::mail::Mail;
use time::OffsetDateTime;

use super::decide::{AcceptedInvitation, MemberRights};
use crate::audit::AuditEntry;
use crate::auth::{OneTimeLink, TokenDigest};
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
    /// The member is an admin (now, in the change's transaction) and the caller manages agents
    /// only ([`MemberRights::AgentsOnly`]).
    #[error("only workspace admins can change an admin")]
    AdminsOnly,
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
    /// A password for a new account (the operator's CLI, who vouches for the person); an
    /// existing account keeps its own.
    pub password_hash: Option<PasswordHash>,
    /// The link stored and e-mailed when the membership is `invited`
    /// ([`decide_admission`](super::decide_admission) says when).
    pub invitation: PendingInvitation,
}

/// An invitation to store and e-mail with the membership, in one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingInvitation {
    /// The digest of the link's token.
    pub digest: TokenDigest,
    /// When the link stops working.
    pub expires_at: OffsetDateTime,
    /// The e-mail carrying the link to the address.
    pub mail: Mail,
}

/// A member just added, or invited again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedRow {
    /// The member.
    pub profile: MemberProfile,
    /// Whether the invitation was stored and e-mailed (the membership is `invited`).
    pub invited: bool,
}

/// Why a member could not be added.
#[derive(Debug, thiserror::Error)]
pub enum AddMemberError {
    /// Already an active or deactivated member of the workspace.
    #[error("already a member")]
    AlreadyMember,
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// An invitation link as stored, with what it leads to: the facts
/// [`InvitationFacts::is_open`] and [`decide_acceptance`](super::decide_acceptance) read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvitationFacts {
    /// The workspace.
    pub workspace_id: WorkspaceId,
    /// Its name.
    pub workspace_name: String,
    /// The invited account.
    pub user_id: UserId,
    /// Its address.
    pub email: String,
    /// Its password hash; `None` while it has no password.
    pub password_hash: Option<PasswordHash>,
    /// The link: when it expires, and when it was used.
    pub link: OneTimeLink,
    /// The status of the membership it invites to.
    pub membership: MemberStatus,
}

impl InvitationFacts {
    /// Whether the link still opens the invitation at `now`: unused, unexpired, and its
    /// membership still `invited` (a link of a membership that became active, or was deactivated
    /// meanwhile, opens nothing).
    pub fn is_open(&self, now: OffsetDateTime) -> bool {
        self.link.is_open(now) && self.membership == MemberStatus::Invited
    }
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

    /// The member with this e-mail, whatever their status; `None` for someone outside.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn find_by_email(&self, ws: WorkspaceId, email: &Email) -> Result<Option<MemberProfile>, RepoError>;

    /// The workspace's name (for the invitation e-mail).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn workspace_name(&self, ws: WorkspaceId) -> Result<Option<String>, RepoError>;

    /// Adds the person in one transaction: the account if new, the membership (`invited` with
    /// `new.invitation`, or `active` as [`decide_admission`](super::decide_admission) says), the
    /// invitation and its e-mail when invited, and `audit` (its target id
    /// left to the user's). An `invited` member added again gets the new invitation (role and name
    /// as given) and every older link of theirs stops working.
    ///
    /// # Errors
    /// [`AddMemberError`].
    async fn add(&self, new: &NewMember, audit: &AuditEntry) -> Result<AddedRow, AddMemberError>;

    /// The invitation with this digest, used, expired or not; `None` when there is none (never
    /// sent, voided, or its membership removed).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn invitation(&self, digest: &TokenDigest) -> Result<Option<InvitationFacts>, RepoError>;

    /// Accepts the invitation with this digest as
    /// [`decide_acceptance`](super::decide_acceptance) decides over its facts read under lock
    /// (a link works once even when submitted twice at the same time): uses up the link,
    /// activates the membership and, with `password`, sets the account's first password. `None`
    /// (and nothing changed) when it refuses.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn accept_invitation(
        &self,
        digest: &TokenDigest,
        now: OffsetDateTime,
        password: Option<PasswordHash>,
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
        rights: MemberRights,
    ) -> Result<MemberProfile, ChangeMemberError>;

    /// Removes the membership (the user keeps their other workspaces); refuses removing the last
    /// active admin. `audit` is stored with the change.
    ///
    /// # Errors
    /// [`ChangeMemberError`].
    async fn remove(
        &self,
        ws: WorkspaceId,
        user: UserId,
        audit: &AuditEntry,
        rights: MemberRights,
    ) -> Result<(), ChangeMemberError>;
}
