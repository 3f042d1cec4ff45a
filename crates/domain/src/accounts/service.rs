//! `POST /v1/auth/password-reset` and the `/password-reset` pages.

use std::net::IpAddr;
use std::sync::Arc;

use time::Duration;

use super::decide::ResetLinkFacts;
use super::ports::{NewPasswordReset, PasswordResetRepository};
use crate::auth::{LoginThrottleStore, NewToken, ThrottlePolicy, ThrottleSubject, TokenDigest, TokenKind};
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::ports::{Clock, PasswordHasher, RandomSource};
use crate::mail::{Letter, Mail, MailLink, SiteUrl};
use crate::users::{Email, Password};

/// How long a reset link works.
pub const RESET_TTL: Duration = Duration::hours(1);

/// Why a reset could not be requested.
#[derive(Debug, thiserror::Error)]
pub enum RequestResetError {
    /// The e-mail is malformed (422).
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Too many requests for this address from this client, or from this client (429).
    #[error("too many password reset requests; retry in {retry_after_secs} seconds")]
    Throttled {
        /// Seconds until one is admitted again.
        retry_after_secs: u64,
    },
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a new password could not be set.
#[derive(Debug, thiserror::Error)]
pub enum CompleteResetError {
    /// Unknown, used, voided or expired link (410).
    #[error("this password reset link does not work")]
    Invalid,
    /// The new password is not acceptable (422).
    #[error(transparent)]
    Password(ValidationErrors),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// The password reset use cases.
#[derive(Clone)]
pub struct PasswordResetService {
    /// Storage.
    pub repo: Arc<dyn PasswordResetRepository>,
    /// The sign-in throttle's store: requests are counted like sign-ins, in budgets of their own.
    pub throttle: Arc<dyn LoginThrottleStore>,
    /// The budgets (those of sign-in).
    pub policy: ThrottlePolicy,
    /// Password hashing.
    pub hasher: Arc<dyn PasswordHasher>,
    /// Token randomness.
    pub random: Arc<dyn RandomSource>,
    /// Now.
    pub clock: Arc<dyn Clock>,
    /// Where links point.
    pub site: SiteUrl,
}

impl std::fmt::Debug for PasswordResetService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PasswordResetService").finish_non_exhaustive()
    }
}

/// The reset e-mail.
pub fn reset_mail(to: Email, link: String) -> Mail {
    let letter = Letter {
        paragraphs: vec!["Someone asked to choose a new password for your wms account.".to_owned()],
        link: Some(MailLink { label: "Choose a new password".into(), url: link }),
        closing: vec!["The link works once, for 1 hour. Choosing a new password signs you out everywhere. \
             If you did not ask for this, ignore this e-mail: your password stays as it is."
            .to_owned()],
    };
    Mail::compose(to, "Choose a new wms password", &letter)
}

impl PasswordResetService {
    /// Asks for a reset link. The answer is the same for every well-formed address; only an
    /// account with a password gets an e-mail. Every request counts against the sign-in budgets
    /// (per address and client, and per client), kept apart from sign-in's own.
    ///
    /// # Errors
    /// [`RequestResetError`].
    pub async fn request(&self, email: &str, client: Option<IpAddr>) -> Result<(), RequestResetError> {
        let email = Email::new("email", email).map_err(|e| ValidationErrors(vec![e]))?;
        let pair = ThrottleSubject::email_from(&email, client);
        let mut subjects = vec![ThrottleSubject::from_stored(pair.as_str().replacen("email:", "email:reset/", 1))];
        if let Some(ip) = client {
            subjects.push(ThrottleSubject::from_stored(format!("reset/{}", ThrottleSubject::client(ip).as_str())));
        }
        if let Some(retry_after_secs) = self.throttle.reserve(&subjects, self.clock.now(), self.policy).await? {
            return Err(RequestResetError::Throttled { retry_after_secs });
        }
        let Some(user_id) = self.repo.account(&email).await?.filter(|a| a.has_password).map(|a| a.user_id) else {
            return Ok(());
        };
        let token = NewToken::generate(TokenKind::User, self.random.as_ref());
        let link = self.site.link(&format!("/password-reset/{}", token.secret));
        let reset = NewPasswordReset {
            user_id,
            digest: token.digest(),
            expires_at: self.clock.now() + RESET_TTL,
            mail: reset_mail(email, link),
        };
        self.repo.create(&reset).await?;
        Ok(())
    }

    /// The address a reset link is for, while it works.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn open(&self, token: &str) -> Result<Option<String>, RepoError> {
        match digest(token) {
            Some(d) => Ok(self.open_link(&d).await?.map(|f| f.email)),
            None => Ok(None),
        }
    }

    /// Sets the new password, uses up the link, voids the account's other links and signs the
    /// account out everywhere.
    ///
    /// # Errors
    /// [`CompleteResetError`].
    pub async fn complete(&self, token: &str, password: &str) -> Result<(), CompleteResetError> {
        let digest = digest(token).ok_or(CompleteResetError::Invalid)?;
        let password =
            Password::new("password", password).map_err(|e| CompleteResetError::Password(ValidationErrors(vec![e])))?;
        // Checked before hashing, so a made-up link costs no password hash.
        if self.open_link(&digest).await?.is_none() {
            return Err(CompleteResetError::Invalid);
        }
        let hash = self.hasher.hash(&password).await.map_err(RepoError)?;
        self.repo.complete(&digest, self.clock.now(), &hash).await?.ok_or(CompleteResetError::Invalid)?;
        Ok(())
    }

    /// The link with `digest` while it works.
    async fn open_link(&self, digest: &TokenDigest) -> Result<Option<ResetLinkFacts>, RepoError> {
        let now = self.clock.now();
        Ok(self.repo.link(digest).await?.filter(|f| f.link.is_open(now)))
    }
}

fn digest(token: &str) -> Option<TokenDigest> {
    crate::auth::parse(token).ok().filter(|t| t.kind == TokenKind::User).map(|t| t.digest)
}
