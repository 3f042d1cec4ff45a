//! The outbox and the mail server, as the sending worker sees them.

use std::time::Duration;

use async_trait::async_trait;
use time::OffsetDateTime;

use super::model::Mail;
use crate::common::error::RepoError;

/// A mail's id in the outbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MailId(pub i64);

/// A mail taken from the outbox by one worker, for the length of its lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedMail {
    /// Its id.
    pub id: MailId,
    /// Which attempt this claim is (1 for the first): the result is recorded only for this
    /// claim, so a worker whose lease ran out cannot overwrite a newer claim's result.
    pub attempt: u32,
    /// When it was written to the outbox.
    pub queued_at: OffsetDateTime,
    /// The mail.
    pub mail: Mail,
}

/// What became of one attempt, to be recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailFate {
    /// The server accepted it.
    Sent,
    /// Not sent; tried again at the given time.
    Retry {
        /// When it is due again.
        at: OffsetDateTime,
        /// Why this attempt failed (no secrets: the server's answer or the connection error).
        error: String,
    },
    /// Given up: the server refused the address for good, or it waited too long.
    Failed {
        /// Why.
        error: String,
    },
}

/// The result of one claimed mail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailResult {
    /// The mail.
    pub id: MailId,
    /// The claim's attempt number.
    pub attempt: u32,
    /// What became of it.
    pub fate: MailFate,
}

/// The durable outbox: mails written with the changes that cause them, claimed by the workers
/// of every instance without two taking the same one.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait MailQueue: Send + Sync {
    /// Takes up to `max` mails due at `now` (new, due again, or whose previous claim's lease ran
    /// out), leasing each for `lease`: no other worker takes them meanwhile.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn claim_due(&self, now: OffsetDateTime, max: usize, lease: Duration) -> Result<Vec<ClaimedMail>, RepoError>;

    /// Records one result (ignored when the claim is no longer the mail's latest).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn record(&self, result: &MailResult) -> Result<(), RepoError>;
}

/// Why a mail server did not take a mail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// Worth trying again later: no connection, a timeout, a 4xx answer, a rejected login.
    #[error("{0}")]
    Transient(String),
    /// The server refused this recipient or message for good (a 5xx about the address).
    #[error("{0}")]
    Permanent(String),
}

/// The mail server (SMTP), or the console of `wms dev`.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait MailTransport: Send + Sync {
    /// Hands `mail` to the server, from the configured sender.
    ///
    /// # Errors
    /// [`TransportError`].
    async fn send(&self, mail: &Mail) -> Result<(), TransportError>;
}
