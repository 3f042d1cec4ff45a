//! Searches of the public documentation pages without credentials (`/docs?q=`): full-text only
//! ([`super::DocsSearch::search_full_text`]) and at most [`SEARCHES_PER_MINUTE`] a minute per
//! client address (`docs/search.md`, "Visitors").
//!
//! The count is exact over a sliding minute: each client address keeps the times of its searches
//! of the last minute, and a search is admitted only while fewer than [`SEARCHES_PER_MINUTE`] of
//! them are less than a minute old. Never more than 60 within any 60 seconds.

use std::net::IpAddr;

use async_trait::async_trait;
use time::{Duration, OffsetDateTime};

use crate::auth::ThrottleSubject;
use crate::common::error::RepoError;

/// Anonymous searches admitted per minute and client address.
pub const SEARCHES_PER_MINUTE: u32 = 60;

/// Where one client address stands: the times of its admitted searches of the last minute,
/// oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VisitorPace {
    /// Admission times, oldest first (older ones may linger; they no longer count).
    pub searches: Vec<OffsetDateTime>,
}

impl VisitorPace {
    /// When this record stops mattering: a minute after its newest search.
    pub fn expires_at(&self) -> Option<OffsetDateTime> {
        self.searches.last().map(|t| *t + WINDOW)
    }
}

/// What [`admit_visitor`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VisitorVerdict {
    /// Search; store the new pace.
    Admitted(VisitorPace),
    /// 429; nothing changes.
    Limited {
        /// Whole seconds until a search would be admitted (at least 1).
        retry_after_secs: u32,
    },
}

const WINDOW: Duration = Duration::minutes(1);

/// Decides a search at `now` of a client whose stored pace is `stored`.
pub fn admit_visitor(stored: &VisitorPace, now: OffsetDateTime) -> VisitorVerdict {
    let recent: Vec<OffsetDateTime> = stored.searches.iter().copied().filter(|t| now - *t < WINDOW).collect();
    if recent.len() >= SEARCHES_PER_MINUTE as usize {
        // Admitted again once the oldest search that keeps the minute full is a minute old.
        let freeing = recent[recent.len() - SEARCHES_PER_MINUTE as usize];
        let wait = (freeing + WINDOW - now).as_seconds_f64().ceil();
        return VisitorVerdict::Limited { retry_after_secs: (wait as u32).max(1) };
    }
    let mut searches = recent;
    searches.push(now);
    VisitorVerdict::Admitted(VisitorPace { searches })
}

/// The key of a client's pace: its address, or the /64 of an IPv6 address (as sign-in failures).
pub fn visitor_key(client: IpAddr) -> String {
    ThrottleSubject::client(client).as_str().to_owned()
}

/// Where the paces are kept, shared by every instance.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait VisitorSearches: Send + Sync {
    /// Loads the pace of `key` (locked against concurrent searches of the same client), applies
    /// [`admit_visitor`] at `now` and stores an admitted search's new pace.
    ///
    /// # Errors
    /// Database errors.
    async fn admit(&self, key: &str, now: OffsetDateTime) -> Result<VisitorVerdict, RepoError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(n: u32, now: OffsetDateTime, mut pace: VisitorPace) -> (u32, VisitorPace, Option<u32>) {
        let mut admitted = 0;
        let mut refused = None;
        for _ in 0..n {
            match admit_visitor(&pace, now) {
                VisitorVerdict::Admitted(p) => {
                    admitted += 1;
                    pace = p;
                }
                VisitorVerdict::Limited { retry_after_secs } => refused = Some(retry_after_secs),
            }
        }
        (admitted, pace, refused)
    }

    fn start() -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + Duration::days(20_000)
    }

    #[test]
    fn sixty_at_once_then_none_until_the_first_is_a_minute_old() {
        let now = start();
        let (admitted, pace, refused) = run(100, now, VisitorPace::default());
        assert_eq!(admitted, 60);
        assert_eq!(refused, Some(60));
        let (later, pace, refused) = run(5, now + Duration::seconds(59), pace);
        assert_eq!((later, refused), (0, Some(1)));
        let (rested, pace, _) = run(100, now + Duration::minutes(1), pace);
        assert_eq!(rested, 60, "a full minute's worth once the first ones are a minute old");
        assert_eq!(pace.searches.len(), 60, "what no longer counts is dropped");
        assert_eq!(pace.expires_at(), Some(now + Duration::minutes(2)));
    }

    #[test]
    fn never_more_than_sixty_within_any_minute() {
        let mut pace = VisitorPace::default();
        let mut times = Vec::new();
        for tenth in 0..3_000 {
            let now = start() + Duration::milliseconds(100 * tenth);
            if let VisitorVerdict::Admitted(p) = admit_visitor(&pace, now) {
                pace = p;
                times.push(now);
            }
        }
        for (i, t) in times.iter().enumerate() {
            let within = times[i..].iter().take_while(|u| **u - *t < Duration::minutes(1)).count();
            assert!(within <= 60, "{within} within a minute from {t}");
        }
        assert_eq!(times.len(), 300, "and 60 in each minute of five");
    }

    #[test]
    fn ipv6_clients_share_their_64() {
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap_or(IpAddr::from([0; 4]));
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap_or(IpAddr::from([0; 4]));
        assert_eq!(visitor_key(a), visitor_key(b));
    }
}
