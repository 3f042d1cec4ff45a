//! Storage of password resets.

use async_trait::async_trait;
use time::OffsetDateTime;

#[cfg(doc)]
use super::decide::{decide_reset, PasswordResetCompletion};
use super::decide::{ResetAccount, ResetLinkFacts};
use crate::auth::TokenDigest;
use crate::common::error::RepoError;
use crate::common::ports::PasswordHash;
use crate::mail::Mail;
use crate::users::{Email, UserId};

/// A reset link to store and e-mail, in one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPasswordReset {
    /// The account.
    pub user_id: UserId,
    /// The digest of the link's token.
    pub digest: TokenDigest,
    /// When the link stops working.
    pub expires_at: OffsetDateTime,
    /// The e-mail carrying it.
    pub mail: Mail,
}

/// Password resets. The link's token is stored as a digest only.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait PasswordResetRepository: Send + Sync {
    /// The account with this address (compared without case); `None` for an unknown address.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn account(&self, email: &Email) -> Result<Option<ResetAccount>, RepoError>;

    /// Stores the link and writes its e-mail to the outbox, in one transaction.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn create(&self, reset: &NewPasswordReset) -> Result<(), RepoError>;

    /// The reset link with this digest, used, expired or not; `None` when there is none.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn link(&self, digest: &TokenDigest) -> Result<Option<ResetLinkFacts>, RepoError>;

    /// Completes the reset of the link with this digest as [`decide_reset`] decides over its
    /// facts read under lock, applying the [`PasswordResetCompletion`] in one transaction; `None`
    /// (nothing changed) when it refuses or there is no such link.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn complete(
        &self,
        digest: &TokenDigest,
        now: OffsetDateTime,
        password: &PasswordHash,
    ) -> Result<Option<UserId>, RepoError>;
}
