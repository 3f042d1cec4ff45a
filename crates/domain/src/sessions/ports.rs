//! Storage of sessions.

use async_trait::async_trait;
use time::OffsetDateTime;

use super::model::{Session, WorkspaceChoice};
use crate::audit::AuditEntry;
use crate::auth::{SignInProof, SignInStored, StoredMember, TokenDigest};
use crate::common::error::RepoError;
use crate::users::UserId;
use crate::workspace::WorkspaceId;

/// A session to store: its digest, never the cookie value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession {
    /// SHA-256 of the cookie value.
    pub digest: TokenDigest,
    /// The user.
    pub user_id: UserId,
    /// The workspace, when known at sign-in.
    pub workspace_id: Option<WorkspaceId>,
    /// Now.
    pub created_at: OffsetDateTime,
    /// When it ends.
    pub expires_at: OffsetDateTime,
    /// What proved who signs in, checked again where the session is stored.
    pub proof: SignInProof,
}

/// Sessions, shared by every instance.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait SessionRepository: Send + Sync {
    /// Stores a new session and its sign-in records (`user.signed_in`, one per workspace it
    /// names) in one transaction; nothing when the session's [`SignInProof`] no longer holds for
    /// the account, read with its row locked.
    ///
    /// # Errors
    /// Infrastructure failures only (nothing is stored then).
    async fn insert(&self, new: &NewSession, audit: &[AuditEntry]) -> Result<SignInStored, RepoError>;

    /// The session with this digest, valid or not.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn find(&self, digest: &TokenDigest) -> Result<Option<Session>, RepoError>;

    /// Sets the workspace of a session that has none yet and is not revoked; whether it did.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn set_workspace(&self, digest: &TokenDigest, ws: WorkspaceId) -> Result<bool, RepoError>;

    /// Revokes the session (keeping the first revocation time).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn revoke(&self, digest: &TokenDigest, at: OffsetDateTime) -> Result<(), RepoError>;

    /// Deletes sessions that ended before `before`; how many.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn delete_ended(&self, before: OffsetDateTime) -> Result<u64, RepoError>;

    /// The user's memberships, whatever their standing, with names, by workspace id.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn workspaces_of(&self, user: UserId) -> Result<Vec<WorkspaceChoice>, RepoError>;

    /// The user's membership in `ws`, whatever its standing, with the current role and plan
    /// (read on every request: a demotion applies at once).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn member(&self, ws: WorkspaceId, user: UserId) -> Result<Option<StoredMember>, RepoError>;
}
