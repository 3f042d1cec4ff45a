//! The sign-in throttle: too many failed sign-ins for one e-mail address from one client network,
//! or from one client network for any address, within the window refuse further attempts (429)
//! until enough of them are older than the window.
//!
//! The window slides: each subject keeps the times of its latest failures (at most its budget of
//! them), so "at most 5 in 15 minutes" holds for every 15 minutes, not only for windows counted
//! from a first failure (with those, 5 failures at the end of one window and 5 at the start of the
//! next would be 10 within seconds).
//!
//! An attempt is *reserved* before the password hash is computed, atomically for all its subjects
//! (`docs/contract.md`, "Abuse limits"): a thousand concurrent guesses cannot all pass a check made
//! before any of them is counted, and a refused attempt costs neither hashing nor budget. The
//! e-mail is counted per client network, never alone, so failures from one network never lock the
//! owner out when signing in from another.

use std::net::IpAddr;

use time::{Duration, OffsetDateTime};

use super::ports::LoginThrottleStore;
use crate::common::error::RepoError;

use crate::users::Email;

/// What is throttled: an e-mail address from one client network, or a client network.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ThrottleSubject(String);

impl ThrottleSubject {
    /// Failures for one account (whether or not it exists) from one client network; `None` when
    /// the client's address is unknown, which then shares one budget per e-mail.
    pub fn email_from(email: &Email, client: Option<IpAddr>) -> Self {
        let network = client.map(|ip| Self::client(ip).0);
        // `ip:...` never holds a space, so the pair cannot be confused with another pair.
        Self(format!("email:{} {}", network.as_deref().unwrap_or("ip:unknown"), email.as_str()))
    }

    /// Failures from one client: an IPv4 address, or the /64 of an IPv6 address (one host
    /// usually owns a whole /64, so single addresses would be free to rotate).
    pub fn client(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(v4) => Self(format!("ip:{v4}")),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Self(format!("ip:{v4}")),
                None => {
                    let s = v6.segments();
                    Self(format!("ip:{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3]))
                }
            },
        }
    }

    /// Badly signed platform callbacks from one client (as [`ThrottleSubject::client`]; unknown
    /// addresses share one budget). Counted apart from sign-ins.
    pub fn callbacks_from(client: Option<IpAddr>) -> Self {
        let network = client.map_or_else(|| "ip:unknown".to_owned(), |ip| Self::client(ip).0);
        Self(format!("callback:{network}"))
    }

    /// Wraps a stored key.
    pub fn from_stored(key: String) -> Self {
        Self(key)
    }

    /// The stored key.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn is_email(&self) -> bool {
        self.0.starts_with("email:")
    }
}

/// One password attempt against the throttle: the e-mail from this client network and the
/// network itself. Every place that checks a password (sign-in, the invitation page) reserves
/// through it before hashing and gives the reservation back through it on success, so no form
/// is a way around the sign-in budget.
#[derive(Debug, Clone)]
pub struct PasswordAttempt {
    pair: ThrottleSubject,
    clients: Vec<ThrottleSubject>,
}

impl PasswordAttempt {
    /// An attempt at `email`'s password from `client`.
    pub fn new(email: &Email, client: Option<IpAddr>) -> Self {
        Self {
            pair: ThrottleSubject::email_from(email, client),
            clients: client.map(ThrottleSubject::client).into_iter().collect(),
        }
    }

    /// Reserves the attempt (see [`LoginThrottleStore::reserve`]): `None` when it may go ahead,
    /// else the seconds to wait.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn reserve(
        &self,
        store: &dyn LoginThrottleStore,
        now: OffsetDateTime,
        policy: ThrottlePolicy,
    ) -> Result<Option<u64>, RepoError> {
        let mut subjects = Vec::with_capacity(1 + self.clients.len());
        subjects.push(self.pair.clone());
        subjects.extend(self.clients.iter().cloned());
        store.reserve(&subjects, now, policy).await
    }

    /// The password was right: the e-mail's failures from this network are forgotten and the
    /// network gets its reserved attempt back.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn succeeded(&self, store: &dyn LoginThrottleStore) -> Result<(), RepoError> {
        store.release(&self.pair, &self.clients).await
    }
}

/// A subject's latest failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThrottleRecord {
    /// Whose.
    pub subject: ThrottleSubject,
    /// When its latest failures happened, oldest first: at most the subject's budget of them
    /// ([`ThrottlePolicy::budget`]), since older ones can no longer decide anything.
    pub failed_at: Vec<OffsetDateTime>,
}

impl ThrottleRecord {
    /// `subject`'s record after one more failure at `now`, `earlier` being its record so far:
    /// failures `policy.window` or longer ago are dropped, and of the rest only the newest
    /// `policy.budget(subject)` are kept. Sign-ins and badly signed callbacks count alike.
    pub fn after_failure(
        subject: &ThrottleSubject,
        earlier: Option<&ThrottleRecord>,
        now: OffsetDateTime,
        policy: ThrottlePolicy,
    ) -> ThrottleRecord {
        let mut failed_at: Vec<OffsetDateTime> = earlier
            .map(|r| r.failed_at.iter().copied().filter(|at| *at > now - policy.window).collect())
            .unwrap_or_default();
        failed_at.push(now);
        failed_at.sort();
        let budget = usize::try_from(policy.budget(subject)).unwrap_or(usize::MAX).max(1);
        let excess = failed_at.len().saturating_sub(budget);
        failed_at.drain(..excess);
        ThrottleRecord { subject: subject.clone(), failed_at }
    }

    /// The record after a reserved attempt is given back (the password was right): its newest
    /// failure (the reservation's) taken off; `None` (forgotten) when none is left.
    pub fn refunded(&self) -> Option<ThrottleRecord> {
        let mut failed_at = self.failed_at.clone();
        failed_at.pop();
        (!failed_at.is_empty()).then(|| ThrottleRecord { subject: self.subject.clone(), failed_at })
    }

    /// The newest failure, if any (what the daily clean-up looks at).
    pub fn last_failed_at(&self) -> Option<OffsetDateTime> {
        self.failed_at.iter().max().copied()
    }
}

/// What a successful attempt changes in the throttle's records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThrottleRelease {
    /// Records to store as they are.
    pub kept: Vec<ThrottleRecord>,
    /// Subjects whose records go.
    pub gone: Vec<ThrottleSubject>,
}

/// Gives back a successful attempt over `records` (read under the subjects' locks): `forget`'s
/// failures are forgotten (the e-mail from this client), and each of `refund` gets its reserved
/// attempt back ([`ThrottleRecord::refunded`]; the client network).
pub fn release(records: &[ThrottleRecord], forget: &ThrottleSubject, refund: &[ThrottleSubject]) -> ThrottleRelease {
    let mut out = ThrottleRelease::default();
    for r in records {
        if r.subject == *forget {
            out.gone.push(r.subject.clone());
        } else if refund.contains(&r.subject) {
            match r.refunded() {
                Some(kept) => out.kept.push(kept),
                None => out.gone.push(r.subject.clone()),
            }
        }
    }
    out
}

/// Limits of the throttle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThrottlePolicy {
    /// Failed sign-ins per e-mail address and client network per window before refusing.
    pub per_email: u32,
    /// Failed sign-ins per client network per window before refusing.
    pub per_client: u32,
    /// The window.
    pub window: Duration,
}

impl Default for ThrottlePolicy {
    /// 5 failures per address and client and 50 per client network in 15 minutes
    /// (`docs/contract.md`, "Abuse limits"): far above what a person mistypes, far below what
    /// guessing needs (OWASP authentication cheat sheet).
    fn default() -> Self {
        Self { per_email: 5, per_client: 50, window: Duration::minutes(15) }
    }
}

impl ThrottlePolicy {
    /// Failures `subject` may have within a window: [`ThrottlePolicy::per_email`] for an e-mail
    /// from a network, [`ThrottlePolicy::per_client`] for anything else.
    pub fn budget(&self, subject: &ThrottleSubject) -> u32 {
        if subject.is_email() {
            self.per_email
        } else {
            self.per_client
        }
    }

    /// When `record`'s subject may try again, or `None` when it may now: with its budget of
    /// failures within the window, once the oldest of them is `window` old.
    pub fn refused_until(&self, record: &ThrottleRecord, now: OffsetDateTime) -> Option<OffsetDateTime> {
        let budget = usize::try_from(self.budget(&record.subject)).unwrap_or(usize::MAX).max(1);
        let mut recent: Vec<OffsetDateTime> =
            record.failed_at.iter().copied().filter(|at| *at > now - self.window).collect();
        if recent.len() < budget {
            return None;
        }
        recent.sort();
        Some(recent[recent.len() - budget] + self.window)
    }

    /// Whole seconds until every subject among `records` may try again, or `None` when attempts
    /// are allowed now.
    pub fn retry_after(&self, records: &[ThrottleRecord], now: OffsetDateTime) -> Option<u64> {
        records
            .iter()
            .filter_map(|r| self.refused_until(r, now))
            .map(|until| until - now)
            .filter(|left| left.is_positive())
            .max()
            .map(|left| u64::try_from(left.whole_seconds()).unwrap_or(0) + u64::from(left.subsec_nanoseconds() > 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-11-20 12:00 UTC);

    /// `subject`'s record with one failure at each of `seconds_ago`.
    fn record(subject: ThrottleSubject, seconds_ago: &[i64]) -> ThrottleRecord {
        let mut failed_at: Vec<OffsetDateTime> = seconds_ago.iter().map(|s| NOW - Duration::seconds(*s)).collect();
        failed_at.sort();
        ThrottleRecord { subject, failed_at }
    }

    /// `n` failures, the oldest `minutes_ago`, one a second after it.
    fn failures(subject: ThrottleSubject, n: i64, minutes_ago: i64) -> ThrottleRecord {
        let seconds: Vec<i64> = (0..n).map(|i| minutes_ago * 60 - i).collect();
        record(subject, &seconds)
    }

    fn ann() -> Email {
        Email::new("email", "ann@example.com").expect("email")
    }

    fn email() -> ThrottleSubject {
        ThrottleSubject::email_from(&ann(), Some("10.0.0.1".parse().expect("ip")))
    }

    fn network() -> ThrottleSubject {
        ThrottleSubject::client("10.0.0.1".parse().expect("ip"))
    }

    #[test]
    fn subjects_name_the_address_and_the_network() {
        assert_eq!(email().as_str(), "email:ip:10.0.0.1 ann@example.com");
        assert_ne!(email(), ThrottleSubject::email_from(&ann(), Some("10.0.0.2".parse().expect("ip"))));
        assert_eq!(ThrottleSubject::email_from(&ann(), None).as_str(), "email:ip:unknown ann@example.com");
        assert_eq!(ThrottleSubject::client("10.1.2.3".parse().expect("ip")).as_str(), "ip:10.1.2.3");
        assert_eq!(
            ThrottleSubject::client("2001:db8:1:2:aaaa::1".parse().expect("ip")).as_str(),
            ThrottleSubject::client("2001:db8:1:2:bbbb::9".parse().expect("ip")).as_str()
        );
        assert_eq!(ThrottleSubject::client("::ffff:10.1.2.3".parse().expect("ip")).as_str(), "ip:10.1.2.3");
    }

    #[test]
    fn a_failure_is_kept_with_the_latest_ones_still_in_the_window() {
        let p = ThrottlePolicy::default();
        assert_eq!(ThrottleRecord::after_failure(&email(), None, NOW, p), record(email(), &[0]));
        assert_eq!(
            ThrottleRecord::after_failure(&email(), Some(&record(email(), &[840, 60])), NOW, p),
            record(email(), &[840, 60, 0])
        );
        // A failure exactly `window` old no longer counts, and is dropped.
        assert_eq!(
            ThrottleRecord::after_failure(&email(), Some(&record(email(), &[900, 899])), NOW, p),
            record(email(), &[899, 0])
        );
        // Only the budget's newest are kept: older ones can no longer decide anything.
        let full = failures(email(), 5, 10);
        let next = ThrottleRecord::after_failure(&email(), Some(&full), NOW, p);
        assert_eq!(next.failed_at.len(), 5);
        assert_eq!(next.failed_at.first(), full.failed_at.get(1));
        assert_eq!(next.last_failed_at(), Some(NOW));
        // A network keeps its own, larger budget.
        let busy = failures(network(), 50, 10);
        assert_eq!(ThrottleRecord::after_failure(&network(), Some(&busy), NOW, p).failed_at.len(), 50);
    }

    #[test]
    fn a_refund_takes_the_newest_failure_off_and_forgets_a_record_left_empty() {
        assert_eq!(record(email(), &[300, 200, 1]).refunded(), Some(record(email(), &[300, 200])));
        assert_eq!(record(email(), &[1]).refunded(), None);
        assert_eq!(record(email(), &[]).refunded(), None);
    }

    #[test]
    fn a_success_forgets_the_pair_and_refunds_the_network() {
        let other = ThrottleSubject::client("10.0.0.9".parse().expect("ip"));
        let records = [record(email(), &[9, 8]), record(network(), &[30, 20, 1]), record(other.clone(), &[5])];
        let released = release(&records, &email(), std::slice::from_ref(&network()));
        assert_eq!(released, ThrottleRelease { kept: vec![record(network(), &[30, 20])], gone: vec![email()] });
        let last = release(&[record(network(), &[3])], &email(), std::slice::from_ref(&network()));
        assert_eq!(last, ThrottleRelease { kept: vec![], gone: vec![network()] });
    }

    #[test]
    fn refuses_with_the_budget_in_the_window_until_the_oldest_of_it_is_window_old() {
        let p = ThrottlePolicy::default();
        assert_eq!(p.retry_after(&[failures(email(), 4, 1)], NOW), None);
        assert_eq!(p.retry_after(&[failures(email(), 5, 1)], NOW), Some(14 * 60));
        assert_eq!(p.retry_after(&[record(email(), &[900, 899, 898, 897, 896])], NOW), None);
        // Four of the five in the window: one more may fail.
        assert_eq!(p.retry_after(&[record(email(), &[905, 600, 500, 400, 300])], NOW), None);
    }

    #[test]
    fn the_window_slides_so_no_fifteen_minutes_hold_more_than_the_budget() {
        let p = ThrottlePolicy::default();
        // Five failures in the last minute of a quarter of an hour that began with a failure
        // 14:59 ago: with windows counted from a first failure, five more would be allowed a
        // second later; here the next attempt waits for the oldest of the five.
        let mut r = record(email(), &[899]);
        for s in [59, 50, 40, 30] {
            r = ThrottleRecord::after_failure(&email(), Some(&r), NOW - Duration::seconds(s), p);
        }
        assert_eq!(p.retry_after(std::slice::from_ref(&r), NOW), Some(1));
        // Two seconds on, the oldest is out of the window: one attempt, not five.
        let later = NOW + Duration::seconds(2);
        assert_eq!(p.retry_after(std::slice::from_ref(&r), later), None);
        let r = ThrottleRecord::after_failure(&email(), Some(&r), later, p);
        assert_eq!(p.retry_after(std::slice::from_ref(&r), later), Some(15 * 60 - 59 - 2));
        assert_eq!(p.refused_until(&r, later), Some(NOW - Duration::seconds(59) + p.window));
    }

    #[test]
    fn clients_have_their_own_limit() {
        let p = ThrottlePolicy::default();
        assert_eq!(p.retry_after(&[failures(network(), 49, 0)], NOW), None);
        assert_eq!(p.retry_after(&[failures(network(), 50, 5), failures(email(), 5, 1)], NOW), Some(14 * 60));
        assert_eq!(p.retry_after(&[failures(network(), 50, 5)], NOW), Some(10 * 60));
    }
}
