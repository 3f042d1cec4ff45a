//! Storage port for API keys.

use async_trait::async_trait;
use time::OffsetDateTime;

use super::model::{ApiKey, ApiKeyId, ApiKeyName};
use super::notices::ExpiryNotice;
use super::roll::{GraceSeconds, RollRefusal};
use crate::access::ScopeSet;
use crate::audit::AuditEntry;
use crate::auth::TokenDigest;
use crate::common::error::RepoError;
use crate::common::page::{Page, PageRequest};
use crate::users::UserId;
use crate::workspace::WorkspaceId;

/// What is stored for a new key: its digest and masked form, never the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApiKey {
    /// The workspace.
    pub workspace_id: WorkspaceId,
    /// Its label.
    pub name: ApiKeyName,
    /// SHA-256 of the full key.
    pub digest: TokenDigest,
    /// `wmsk_…` and the last four characters.
    pub masked_key: String,
    /// When it stops working, if ever.
    pub expires_at: Option<OffsetDateTime>,
    /// The admin creating it.
    pub created_by: UserId,
    /// What it may do.
    pub scopes: ScopeSet,
}

/// What is stored for a roll: the successor's digest and masked form (never the key), who rolls,
/// when, and the grace the old key keeps. The rest of the successor comes from the old key
/// ([`super::plan_roll`], decided on the row as locked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRoll {
    /// SHA-256 of the successor.
    pub digest: TokenDigest,
    /// The successor's `wmsk_…` and last four characters.
    pub masked_key: String,
    /// The admin rolling it.
    pub created_by: UserId,
    /// When.
    pub at: OffsetDateTime,
    /// How long the old key keeps working.
    pub grace: GraceSeconds,
}

/// A stored roll: the old key (revoked at the end of the grace, `rolled_to` set) and its successor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolledKeys {
    /// The key rolled.
    pub old: ApiKey,
    /// Its successor.
    pub new: ApiKey,
}

/// Why a roll was not stored.
#[derive(Debug, thiserror::Error)]
pub enum StoreRollError {
    /// The workspace has no such key.
    #[error("no such key")]
    NotFound,
    /// The rule refused the key as it stands.
    #[error(transparent)]
    Refused(RollRefusal),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// API keys of a workspace. Every method is scoped by the workspace, so another workspace's key
/// is simply not found.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ApiKeyRepository: Send + Sync {
    /// One page of the workspace's keys, newest first.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<ApiKey>, RepoError>;

    /// Stores a new key and, in the same transaction, `audit` (its target id left to the new
    /// key's).
    ///
    /// # Errors
    /// Infrastructure failures only (a digest collision of 256 random bits is not a case).
    async fn insert(&self, new: &NewApiKey, audit: &AuditEntry) -> Result<ApiKey, RepoError>;

    /// Marks the key revoked at `at` unless it already is (the first revocation time is kept);
    /// `None` when the workspace has no such key. The change is visible to the next request on
    /// every instance: nothing caches keys. `audit` is stored with the change, only when the key
    /// was not revoked already.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn revoke(
        &self,
        ws: WorkspaceId,
        id: ApiKeyId,
        at: OffsetDateTime,
        audit: &AuditEntry,
    ) -> Result<Option<ApiKey>, RepoError>;

    /// Removes the key and its rate-limit window, storing `audit` with the change; `false` when
    /// the workspace has no such key.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn delete(&self, ws: WorkspaceId, id: ApiKeyId, audit: &AuditEntry) -> Result<bool, RepoError>;

    /// Rolls key `id`: locks it, asks [`super::plan_roll`], stores the successor, marks the old
    /// key revoked at the end of the grace with `rolled_to`, and stores `audit` (target: the old
    /// key; `rolled_to` added to its details), all in one transaction.
    ///
    /// # Errors
    /// [`StoreRollError`]; nothing is stored then.
    async fn roll(
        &self,
        ws: WorkspaceId,
        id: ApiKeyId,
        roll: &KeyRoll,
        audit: &AuditEntry,
    ) -> Result<RolledKeys, StoreRollError>;
}

/// The expiry notices: keys whose notice is due, looked for by index, each handled once.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ExpiryNoticeStore: Send + Sync {
    /// In one transaction: locks up to `limit` keys (skipping those another instance holds) that
    /// expire after `now` but within `notice`'s lead and have no record of `notice`, asks
    /// [`super::decide_expiry_notice`] about each, queues [`super::expiry_mails`] to the
    /// workspace's admins when it says so, and records the notice as handled. Returns how many
    /// keys were handled.
    ///
    /// # Errors
    /// Infrastructure failures only (nothing is recorded or queued then).
    async fn handle_due(&self, notice: ExpiryNotice, now: OffsetDateTime, limit: i64) -> Result<usize, RepoError>;
}
