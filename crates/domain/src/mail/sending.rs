//! The sending worker's one step, and the rule for what an attempt's outcome leaves the mail as.

use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;

use super::ports::{ClaimedMail, MailFate, MailQueue, MailResult, MailTransport, TransportError};
use crate::common::error::RepoError;
use crate::common::ports::Clock;

/// When to try again and when to give up (`mail.retry_schedule`, `mail.give_up_after_hours`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailRetry {
    /// The waits after the first, second, … failed attempt; the last one repeats, so a long
    /// outage never makes a mail fail (before `give_up_after`, when there is one).
    pub delays: Vec<Duration>,
    /// When set, a mail not sent this long after it was queued has failed; by default none: an
    /// outage delays mail, never loses it.
    pub give_up_after: Option<Duration>,
    /// How long a claim lasts: a worker that died while sending leaves the mail to another after
    /// it. Longer than the SMTP timeout, so a slow send is never sent twice in normal operation.
    pub lease: Duration,
}

impl MailRetry {
    /// The wait after attempt number `attempt` failed.
    pub fn delay_after(&self, attempt: u32) -> Duration {
        let i = usize::try_from(attempt.saturating_sub(1)).unwrap_or(usize::MAX);
        self.delays.get(i).or(self.delays.last()).copied().unwrap_or(Duration::from_secs(60))
    }
}

/// What attempt `claim.attempt` of a mail leaves it as, at `now`.
pub fn fate(
    claim: &ClaimedMail,
    outcome: Result<(), TransportError>,
    now: OffsetDateTime,
    retry: &MailRetry,
) -> MailFate {
    match outcome {
        Ok(()) => MailFate::Sent,
        Err(TransportError::Permanent(error)) => MailFate::Failed { error },
        Err(TransportError::Transient(error)) => {
            let at = now + retry.delay_after(claim.attempt);
            if retry.give_up_after.is_some_and(|limit| at - claim.queued_at > limit) {
                MailFate::Failed { error: format!("not sent within the time allowed: {error}") }
            } else {
                MailFate::Retry { at, error }
            }
        }
    }
}

/// The outbox's sender: claims due mails, sends them, records each result as soon as it is known
/// (so a crash after a send repeats at most the mails in flight).
#[derive(Clone)]
pub struct MailSender {
    /// The outbox.
    pub queue: Arc<dyn MailQueue>,
    /// The server.
    pub transport: Arc<dyn MailTransport>,
    /// Now.
    pub clock: Arc<dyn Clock>,
    /// Retries and lease.
    pub retry: MailRetry,
}

impl std::fmt::Debug for MailSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailSender").field("retry", &self.retry).finish_non_exhaustive()
    }
}

impl MailSender {
    /// Sends up to `max` due mails, one after the other; their results.
    ///
    /// # Errors
    /// When the outbox cannot be read or a result cannot be written (the mail is then tried
    /// again after its lease).
    pub async fn send_due(&self, max: usize) -> Result<Vec<MailResult>, RepoError> {
        let claims = self.queue.claim_due(self.clock.now(), max, self.retry.lease).await?;
        let mut results = Vec::with_capacity(claims.len());
        for claim in claims {
            let outcome = self.transport.send(&claim.mail).await;
            let result = MailResult {
                id: claim.id,
                attempt: claim.attempt,
                fate: fate(&claim, outcome, self.clock.now(), &self.retry),
            };
            self.queue.record(&result).await?;
            results.push(result);
        }
        Ok(results)
    }
}

#[cfg(test)]
#[path = "sending_tests.rs"]
mod tests;
