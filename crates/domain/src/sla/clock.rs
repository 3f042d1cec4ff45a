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

/// The workspace's business hours (all hours when none are set).
impl Hours for crate::business_hours::BusinessHours {
    fn add(&self, from: OffsetDateTime, seconds: i64) -> OffsetDateTime {
        self.add_business_seconds(from, seconds)
    }

    fn between(&self, from: OffsetDateTime, to: OffsetDateTime) -> i64 {
        self.business_seconds(from, to)
    }

    fn shift(&self, due: OffsetDateTime, from: OffsetDateTime, to: OffsetDateTime) -> OffsetDateTime {
        if self.is_always() {
            return WallClock.shift(due, from, to);
        }
        self.add(due, self.between(from, to))
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use crate::business_hours::{BusinessHours, BusinessHoursRecord};

    #[test]
    fn business_hours_count_only_their_intervals() {
        let record: BusinessHoursRecord = serde_json::from_value(serde_json::json!({
            "timezone": "UTC", "days": {"thu": [["09:00", "17:00"]], "fri": [["09:00", "17:00"]]}
        }))
        .expect("record");
        let hours = BusinessHours::from_record(&record).expect("valid");
        // Thursday 16:30 plus an hour of business time is Friday 09:30.
        let thu = datetime!(2026-11-26 16:30 UTC);
        assert_eq!(Hours::add(&hours, thu, 3600), datetime!(2026-11-27 09:30 UTC));
        // A stop from Thursday 16:00 to Friday 10:00 holds 2 business hours: a due time moves by them.
        let due = datetime!(2026-11-27 12:00 UTC);
        let moved = hours.shift(due, datetime!(2026-11-26 16:00 UTC), datetime!(2026-11-27 10:00 UTC));
        assert_eq!(moved, datetime!(2026-11-27 14:00 UTC));
        let always = BusinessHours::always();
        let (from, to) = (datetime!(2026-11-26 16:00:00.5 UTC), datetime!(2026-11-26 16:00:02 UTC));
        assert_eq!(always.shift(due, from, to), due + time::Duration::milliseconds(1500), "exact without hours");
    }
}
