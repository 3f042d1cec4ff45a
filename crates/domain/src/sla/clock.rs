//! How an SLA counts time: every second (wall clock), or only the workspace's business hours.

use time::{Duration, OffsetDateTime};

/// A way of counting seconds between two instants.
pub trait Hours {
    /// The instant `seconds` counted seconds after `from`.
    fn add(&self, from: OffsetDateTime, seconds: i64) -> OffsetDateTime;
    /// The counted seconds from `from` to `to` (0 when `to` is not after `from`).
    fn between(&self, from: OffsetDateTime, to: OffsetDateTime) -> i64;
    /// `due` moved by the counted time from `from` to `to` (a clock stopped over that span).
    fn shift(&self, due: OffsetDateTime, from: OffsetDateTime, to: OffsetDateTime) -> OffsetDateTime {
        self.add(due, self.between(from, to))
    }
}

/// Every second counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WallClock;

impl Hours for WallClock {
    fn add(&self, from: OffsetDateTime, seconds: i64) -> OffsetDateTime {
        from + Duration::seconds(seconds)
    }

    fn between(&self, from: OffsetDateTime, to: OffsetDateTime) -> i64 {
        if to <= from {
            return 0;
        }
        let d = to - from;
        // Whole seconds, rounded up: a stop of 1.2 s moves the due times by 2 s, never less.
        d.whole_seconds() + i64::from(d.subsec_nanoseconds() > 0)
    }

    fn shift(&self, due: OffsetDateTime, from: OffsetDateTime, to: OffsetDateTime) -> OffsetDateTime {
        if to <= from {
            return due;
        }
        due + (to - from)
    }
}
