//! When to try a failed delivery again, and when to give up on a destination.

use std::time::Duration;

use time::format_description::well_known::Rfc2822;
use time::OffsetDateTime;

use crate::common::ports::RandomSource;

/// The delays between attempts (`webhooks.retry_schedule`): after attempt `n` fails, the next
/// one waits `delays[n - 1]` plus up to 20% more; after the last delay's attempt, the delivery has
/// failed. Never less than the delay: a schedule an operator sets is the shortest wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrySchedule {
    delays: Vec<Duration>,
}

/// The share by which each delay may grow at random, so retries after an outage spread out.
const JITTER: f64 = 0.2;

impl RetrySchedule {
    /// A schedule of `delays`.
    pub fn new(delays: Vec<Duration>) -> Self {
        Self { delays }
    }

    /// The default: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
    pub fn standard() -> Self {
        Self::new([5, 300, 1800, 7200, 18000, 36000, 36000].into_iter().map(Duration::from_secs).collect())
    }

    /// How many attempts a delivery gets in all (first attempt plus one per delay).
    pub fn max_attempts(&self) -> usize {
        self.delays.len() + 1
    }

    /// The delay before the attempt after attempt number `attempts_made`, with jitter; `None`
    /// when the schedule is exhausted.
    pub fn delay_after(&self, attempts_made: u32, random: &dyn RandomSource) -> Option<Duration> {
        let base = *self.delays.get(usize::try_from(attempts_made).ok()?.checked_sub(1)?)?;
        let mut b = [0u8; 4];
        random.fill(&mut b);
        // A uniform factor in [1, 1 + JITTER].
        let unit = f64::from(u32::from_le_bytes(b)) / f64::from(u32::MAX);
        let factor = 1.0 + JITTER * unit;
        Some(base.mul_f64(factor))
    }
}

/// Bounds within which a `Retry-After` answer is honoured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryAfterBounds {
    /// Shortest wait (a receiver cannot make wms hammer it).
    pub min: Duration,
    /// Longest wait (a receiver cannot park a delivery for ever).
    pub max: Duration,
}

impl Default for RetryAfterBounds {
    fn default() -> Self {
        Self { min: Duration::from_secs(1), max: Duration::from_secs(24 * 3600) }
    }
}

impl RetryAfterBounds {
    /// `wanted` clamped into the bounds.
    pub fn clamp(&self, wanted: Duration) -> Duration {
        wanted.clamp(self.min, self.max)
    }
}

/// Parses a `Retry-After` value: delay-seconds or an HTTP date (RFC 9110, section 10.2.3).
pub fn parse_retry_after(value: &str, now: OffsetDateTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    // IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") is a subset of RFC 2822 dates.
    let at = OffsetDateTime::parse(v, &Rfc2822).ok()?;
    let wait = at - now;
    Some(if wait.is_negative() { Duration::ZERO } else { Duration::try_from(wait).ok()? })
}

/// How an endpoint's answer (or its absence) is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// Any 2xx.
    Delivered,
    /// 410: the destination is deactivated at once.
    Gone,
    /// Anything else; `retry_after` when a 429 or 503 asked for a wait.
    Failed {
        /// The receiver's requested wait.
        retry_after: Option<Duration>,
    },
}

/// Judges an HTTP status (`None`: no answer: timeout, refused, TLS or DNS error).
pub fn classify(status: Option<u16>, retry_after: Option<Duration>) -> AttemptOutcome {
    match status {
        Some(s) if (200..300).contains(&s) => AttemptOutcome::Delivered,
        Some(410) => AttemptOutcome::Gone,
        Some(429 | 503) => AttemptOutcome::Failed { retry_after },
        _ => AttemptOutcome::Failed { retry_after: None },
    }
}

/// The auto-deactivation rule: a destination whose deliveries have all failed since
/// `failing_since` is deactivated once that is `after` (5 days by default) ago.
pub fn should_deactivate(failing_since: OffsetDateTime, now: OffsetDateTime, after: Duration) -> bool {
    now - failing_since >= after
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::ports::MockRandomSource;
    use time::macros::datetime;

    fn random(byte: u8) -> MockRandomSource {
        let mut r = MockRandomSource::new();
        r.expect_fill().returning(move |b| b.fill(byte));
        r
    }

    #[test]
    fn delays_follow_the_schedule_up_to_twenty_percent_later() {
        let s = RetrySchedule::standard();
        let expected = [5u64, 300, 1800, 7200, 18000, 36000, 36000];
        for (i, base) in expected.iter().enumerate() {
            let n = u32::try_from(i + 1).unwrap_or(0);
            let low = s.delay_after(n, &random(0)).map(|d| d.as_secs_f64());
            let high = s.delay_after(n, &random(0xff)).map(|d| d.as_secs_f64());
            let mid = s.delay_after(n, &random(0x80)).map(|d| d.as_secs_f64());
            let b = *base as f64;
            assert!(low.is_some_and(|l| (l - b).abs() < 1e-6), "attempt {n}: {low:?}");
            assert!(high.is_some_and(|h| (h - 1.2 * b).abs() < 1e-6), "attempt {n}: {high:?}");
            assert!(mid.is_some_and(|m| (m - 1.1 * b).abs() < 0.01 * b), "attempt {n}: {mid:?}");
        }
        assert_eq!(s.delay_after(8, &random(0)), None, "8 attempts in all");
        assert_eq!(s.delay_after(0, &random(0)), None);
        assert_eq!(s.max_attempts(), 8);
    }

    #[test]
    fn retry_after_accepts_seconds_and_http_dates() {
        let now = datetime!(2026-01-01 12:00:00 UTC);
        assert_eq!(parse_retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(parse_retry_after("Thu, 01 Jan 2026 12:01:30 GMT", now), Some(Duration::from_secs(90)));
        assert_eq!(parse_retry_after("Thu, 01 Jan 2026 11:00:00 GMT", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
        let b = RetryAfterBounds::default();
        assert_eq!(b.clamp(Duration::ZERO), Duration::from_secs(1));
        assert_eq!(b.clamp(Duration::from_secs(10 * 86400)), Duration::from_secs(86400));
    }

    #[test]
    fn answers_are_classified() {
        assert_eq!(classify(Some(204), None), AttemptOutcome::Delivered);
        assert_eq!(classify(Some(299), None), AttemptOutcome::Delivered);
        assert_eq!(classify(Some(410), None), AttemptOutcome::Gone);
        let wait = Some(Duration::from_secs(9));
        assert_eq!(classify(Some(429), wait), AttemptOutcome::Failed { retry_after: wait });
        assert_eq!(classify(Some(503), wait), AttemptOutcome::Failed { retry_after: wait });
        assert_eq!(classify(Some(500), wait), AttemptOutcome::Failed { retry_after: None }, "only 429 and 503");
        assert_eq!(classify(Some(301), None), AttemptOutcome::Failed { retry_after: None }, "redirects fail");
        assert_eq!(classify(None, None), AttemptOutcome::Failed { retry_after: None });
    }

    #[test]
    fn deactivation_after_five_days_of_failures() {
        let since = datetime!(2026-01-01 00:00:00 UTC);
        let five = Duration::from_secs(5 * 86400);
        assert!(!should_deactivate(since, datetime!(2026-01-05 23:59:59 UTC), five));
        assert!(should_deactivate(since, datetime!(2026-01-06 00:00:00 UTC), five));
    }
}
