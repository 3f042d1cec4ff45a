//! Storage of password resets.

use async_trait::async_trait;
use time::OffsetDateTime;

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
    /// The account with this address that has a password; `None` for an unknown address or an
    /// account that never chose one (it accepts an invitation instead).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn account_with_password(&self, email: &Email) -> Result<Option<UserId>, RepoError>;

    /// Stores the link and writes its e-mail to the outbox, in one transaction.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn create(&self, reset: &NewPasswordReset) -> Result<(), RepoError>;

    /// The address of the account an unused, unexpired link at `now` is for; `None` otherwise.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn open(&self, digest: &TokenDigest, now: OffsetDateTime) -> Result<Option<String>, RepoError>;

    /// In one transaction: uses up the open link, sets the account's password, voids its other
    /// reset links and revokes every login token and settings session of the account; `None`
    /// (nothing changed) when the link is not open.
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
