//! The sign-in throttle: too many failed sign-ins for one e-mail address from one client network,
//! or from one client network for any address, refuse further attempts (429) until the window that
//! began with the first failure ends.
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

/// A subject's failures in its current window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThrottleRecord {
    /// Whose.
    pub subject: ThrottleSubject,
    /// Failures since the window started.
    pub failures: u32,
    /// When the first failure of the window happened.
    pub window_started_at: OffsetDateTime,
}

impl ThrottleRecord {
    /// `subject`'s record after one more failure at `now`, `earlier` being its record so far: the
    /// failure counts in the window under way, or starts a new one when there is none or it
    /// began `window` or longer ago. Sign-ins and badly signed callbacks count alike.
    pub fn after_failure(
        subject: &ThrottleSubject,
        earlier: Option<&ThrottleRecord>,
        now: OffsetDateTime,
        window: Duration,
    ) -> ThrottleRecord {
        match earlier.filter(|r| r.window_started_at > now - window) {
            Some(r) => ThrottleRecord {
                subject: subject.clone(),
                failures: r.failures.saturating_add(1),
                window_started_at: r.window_started_at,
            },
            None => ThrottleRecord { subject: subject.clone(), failures: 1, window_started_at: now },
        }
    }

    /// The record after a reserved attempt is given back (the password was right): one failure
    /// fewer in the same window; `None` (forgotten) when none is left.
    pub fn refunded(&self) -> Option<ThrottleRecord> {
        (self.failures > 1).then(|| ThrottleRecord { failures: self.failures - 1, ..self.clone() })
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
    /// Whole seconds until the longest of the exhausted windows among `records` ends, or `None`
    /// when attempts are allowed now.
    pub fn retry_after(&self, records: &[ThrottleRecord], now: OffsetDateTime) -> Option<u64> {
        records
            .iter()
            .filter(|r| r.failures >= if r.subject.is_email() { self.per_email } else { self.per_client })
            .map(|r| r.window_started_at + self.window - now)
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

    fn record(subject: ThrottleSubject, failures: u32, minutes_ago: i64) -> ThrottleRecord {
        ThrottleRecord { subject, failures, window_started_at: NOW - Duration::minutes(minutes_ago) }
    }

    fn ann() -> Email {
        Email::new("email", "ann@example.com").expect("email")
    }

    fn email() -> ThrottleSubject {
        ThrottleSubject::email_from(&ann(), Some("10.0.0.1".parse().expect("ip")))
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
    fn a_failure_counts_in_the_window_under_way_or_starts_a_new_one() {
        let window = Duration::minutes(15);
        let first = ThrottleRecord::after_failure(&email(), None, NOW, window);
        assert_eq!(first, record(email(), 1, 0));
        assert_eq!(
            ThrottleRecord::after_failure(&email(), Some(&record(email(), 4, 14)), NOW, window),
            record(email(), 5, 14)
        );
        // A window that began exactly `window` ago is over.
        assert_eq!(
            ThrottleRecord::after_failure(&email(), Some(&record(email(), 9, 15)), NOW, window),
            record(email(), 1, 0)
        );
    }

    #[test]
    fn a_refund_gives_one_attempt_back_and_forgets_a_record_left_empty() {
        assert_eq!(record(email(), 3, 4).refunded(), Some(record(email(), 2, 4)));
        assert_eq!(record(email(), 1, 4).refunded(), None);
        assert_eq!(record(email(), 0, 4).refunded(), None);
    }

    #[test]
    fn a_success_forgets_the_pair_and_refunds_the_network() {
        let network = ThrottleSubject::client("10.0.0.1".parse().expect("ip"));
        let other = ThrottleSubject::client("10.0.0.9".parse().expect("ip"));
        let records = [record(email(), 4, 3), record(network.clone(), 7, 3), record(other.clone(), 2, 3)];
        let released = release(&records, &email(), std::slice::from_ref(&network));
        assert_eq!(released, ThrottleRelease { kept: vec![record(network.clone(), 6, 3)], gone: vec![email()] });
        let last = release(&[record(network.clone(), 1, 3)], &email(), std::slice::from_ref(&network));
        assert_eq!(last, ThrottleRelease { kept: vec![], gone: vec![network] });
    }

    #[test]
    fn refuses_after_the_limit_until_the_window_ends() {
        let p = ThrottlePolicy::default();
        assert_eq!(p.retry_after(&[record(email(), 4, 1)], NOW), None);
        assert_eq!(p.retry_after(&[record(email(), 5, 1)], NOW), Some(14 * 60));
        assert_eq!(p.retry_after(&[record(email(), 9, 15)], NOW), None);
    }

    #[test]
    fn clients_have_their_own_limit() {
        let p = ThrottlePolicy::default();
        let client = ThrottleSubject::client("10.0.0.1".parse().expect("ip"));
        assert_eq!(p.retry_after(&[record(client.clone(), 49, 0)], NOW), None);
        assert_eq!(p.retry_after(&[record(client, 50, 5), record(email(), 5, 1)], NOW), Some(14 * 60));
    }
}
