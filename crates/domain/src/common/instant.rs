//! Instants given as text (RFC 3339), kept to the years wms can compute and write with.

use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

/// The first and last UTC years an instant from a client may fall in. RFC 3339 spells years
/// 0000–9999 with any offset, so its extremes leave that range once in UTC (`time` panics past
/// 9999), and a period computed from them (a day after, a report's buckets) must stay inside too.
const YEARS: std::ops::RangeInclusive<i32> = 1..=9998;

/// What a field's problem says when its text is not such an instant.
pub const EXPECTED: &str = "must be an RFC 3339 time between the years 0001 and 9998, such as 2026-11-24T09:30:00Z";

/// `raw` (surrounding spaces ignored) as an instant in UTC, when it is an RFC 3339 time whose
/// UTC year is within 0001–9998.
pub fn parse_rfc3339(raw: &str) -> Option<OffsetDateTime> {
    let at = OffsetDateTime::parse(raw.trim(), &Rfc3339).ok()?;
    in_range(at)
}

/// `at` in UTC, when its UTC year is within 0001–9998.
pub fn in_range(at: OffsetDateTime) -> Option<OffsetDateTime> {
    at.checked_to_offset(UtcOffset::UTC).filter(|t| YEARS.contains(&t.year()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rfc3339_into_utc() {
        let t = parse_rfc3339(" 2026-11-24T10:30:00+01:00 ").expect("a time");
        assert_eq!(t.offset(), UtcOffset::UTC);
        assert_eq!(t.hour(), 9);
    }

    #[test]
    fn refuses_what_leaves_the_years_wms_computes_with() {
        assert!(parse_rfc3339("9999-12-31T23:59:59-01:00").is_none());
        assert!(parse_rfc3339("9999-12-31T01:00:00Z").is_none());
        assert!(parse_rfc3339("0000-01-01T00:00:00Z").is_none());
        assert!(parse_rfc3339("9998-12-31T23:59:59Z").is_some());
        assert!(parse_rfc3339("2026-13-01T00:00:00Z").is_none());
        assert!(parse_rfc3339("yesterday").is_none());
    }
}
