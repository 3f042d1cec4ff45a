//! Business time: how much of a span lies inside business hours, and when a given amount of
//! business time has elapsed. Pure arithmetic over the validated record.
//!
//! Each open interval of a local date is turned into the instants it starts and ends in the
//! zone, so a day on which the clocks change is as long as it really is: a local start that
//! falls in the spring gap opens when the gap ends, a local time that occurs twice (autumn)
//! starts an interval at its first occurrence and ends one at its last. The instants are walked
//! in order with a cursor, so intervals that those rules make overlap are never counted twice.

use std::collections::BTreeSet;
use std::str::FromStr;

use chrono::{Datelike, Duration as ChronoDuration, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, TimeZone};
use chrono_tz::Tz;
use time::OffsetDateTime;

use super::record::{BusinessHoursRecord, WEEKDAYS};
use crate::common::error::{FieldError, ValidationErrors};

const DAY_SECONDS: u32 = 86_400;
/// How far [`BusinessHours::add_business_seconds`] looks ahead before giving up (holidays are a
/// finite list and every schedule has an interval, so this is only a guard).
const HORIZON_DAYS: i64 = 366 * 30;

/// A workspace's business hours, validated. [`BusinessHours::always`] is "none set": every
/// second is business time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusinessHours {
    schedule: Option<Schedule>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Schedule {
    zone: Tz,
    /// Monday first: sorted, non-overlapping `[start, end)` seconds of the local day.
    week: [Vec<(u32, u32)>; 7],
    holidays: BTreeSet<NaiveDate>,
}

impl Default for BusinessHours {
    fn default() -> Self {
        Self::always()
    }
}

impl BusinessHours {
    /// No business hours set: all hours count.
    pub fn always() -> Self {
        Self { schedule: None }
    }

    /// Whether every hour counts (no business hours set).
    pub fn is_always(&self) -> bool {
        self.schedule.is_none()
    }

    /// Validates a wire record. A record without any interval is [`BusinessHours::always`].
    ///
    /// # Errors
    /// Every invalid field: `timezone` (not an IANA zone), `days` (an unknown weekday, a time
    /// that is not `HH:MM`, an interval that ends at or before its start, intervals that overlap),
    /// `holidays` (not a `YYYY-MM-DD` date).
    pub fn from_record(record: &BusinessHoursRecord) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let zone = errors.check(
            Tz::from_str(record.timezone.trim())
                .map_err(|_| FieldError::new("timezone", "must be an IANA time zone such as Europe/Berlin")),
        );
        let week = errors.check(parse_week(record));
        let holidays = errors.check(parse_holidays(&record.holidays));
        errors.into_result()?;
        let (Some(zone), Some(week), Some(holidays)) = (zone, week, holidays) else {
            return Ok(Self::always());
        };
        if week.iter().all(Vec::is_empty) {
            return Ok(Self::always());
        }
        Ok(Self { schedule: Some(Schedule { zone, week, holidays }) })
    }

    /// Business seconds between `from` and `to` (0 when `to` is not after `from`; whole seconds,
    /// rounded down). Never more than the wall-clock seconds, and exactly those when every moment
    /// between counts (no hours set, or all of it inside them): `business_hours=true` without
    /// hours gives the same figures as wall-clock time, to the second.
    pub fn business_seconds(&self, from: OffsetDateTime, to: OffsetDateTime) -> i64 {
        let wall = (to - from).whole_seconds().max(0);
        let (from_ms, to_ms) = (millis(from), millis(to));
        if to_ms <= from_ms {
            return 0;
        }
        let Some(s) = &self.schedule else {
            return wall;
        };
        let first = s.local_date(from_ms).pred_opt().unwrap_or(NaiveDate::MIN);
        let last = s.local_date(to_ms).succ_opt().unwrap_or(NaiveDate::MAX);
        let mut total = 0i64;
        let mut cursor = from_ms;
        let mut day = first;
        while day <= last {
            for (start, end) in s.open_instants(day) {
                let start = start.max(cursor);
                let end = end.min(to_ms);
                if end > start {
                    total += end - start;
                    cursor = end;
                }
            }
            let Some(next) = day.succ_opt() else { break };
            day = next;
        }
        if total == to_ms - from_ms {
            wall
        } else {
            (total / 1000).min(wall)
        }
    }

    /// The instant at which `seconds` of business time have elapsed after `from` (`from` itself
    /// for 0 or less). With hours set, an amount that ends exactly at the close of an interval
    /// gives that close.
    pub fn add_business_seconds(&self, from: OffsetDateTime, seconds: i64) -> OffsetDateTime {
        if seconds <= 0 {
            return from;
        }
        let Some(s) = &self.schedule else {
            return from + time::Duration::seconds(seconds);
        };
        let from_ms = millis(from);
        let mut left = seconds.saturating_mul(1000);
        let mut cursor = from_ms;
        let mut day = s.local_date(from_ms).pred_opt().unwrap_or(NaiveDate::MIN);
        for _ in 0..HORIZON_DAYS {
            for (start, end) in s.open_instants(day) {
                let start = start.max(cursor);
                if end <= start {
                    continue;
                }
                if end - start >= left {
                    return from_millis(start + left);
                }
                left -= end - start;
                cursor = end;
            }
            let Some(next) = day.succ_opt() else { break };
            day = next;
        }
        from_millis(cursor.saturating_add(left))
    }
}

impl Schedule {
    fn local_date(&self, ms: i64) -> NaiveDate {
        match chrono::DateTime::from_timestamp_millis(ms) {
            Some(t) => t.with_timezone(&self.zone).date_naive(),
            None if ms < 0 => NaiveDate::MIN,
            None => NaiveDate::MAX,
        }
    }

    /// The open intervals of a local date as instants (Unix milliseconds), in order.
    fn open_instants(&self, day: NaiveDate) -> Vec<(i64, i64)> {
        if self.holidays.contains(&day) {
            return Vec::new();
        }
        let weekday = day.weekday().num_days_from_monday() as usize;
        self.week[weekday]
            .iter()
            .filter_map(|&(start, end)| {
                let start = self.instant(day, start, Edge::Start)?;
                let end = self.instant(day, end, Edge::End)?;
                (end > start).then_some((start, end))
            })
            .collect()
    }

    /// The instant of a local time of day (`seconds` up to 86 400, the next midnight).
    fn instant(&self, day: NaiveDate, seconds: u32, edge: Edge) -> Option<i64> {
        let (day, seconds) = if seconds >= DAY_SECONDS { (day.succ_opt()?, 0) } else { (day, seconds) };
        let mut local = NaiveDateTime::new(day, NaiveTime::from_num_seconds_from_midnight_opt(seconds, 0)?);
        // A local time in a spring gap does not exist: the interval edge moves to the first
        // minute after the gap (zone changes fall on whole minutes; a skipped day is 1 440 steps).
        for _ in 0..=(2 * DAY_SECONDS / 60) {
            match self.zone.from_local_datetime(&local) {
                LocalResult::Single(t) => return Some(t.timestamp_millis()),
                LocalResult::Ambiguous(first, last) => {
                    return Some(match edge {
                        Edge::Start => first.timestamp_millis(),
                        Edge::End => last.timestamp_millis(),
                    })
                }
                LocalResult::None => local += ChronoDuration::minutes(1),
            }
        }
        None
    }
}

#[derive(Clone, Copy)]
enum Edge {
    Start,
    End,
}

fn millis(t: OffsetDateTime) -> i64 {
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000).unwrap_or(if t.year() < 1970 { i64::MIN } else { i64::MAX })
}

fn from_millis(ms: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

fn parse_week(record: &BusinessHoursRecord) -> Result<[Vec<(u32, u32)>; 7], FieldError> {
    let mut week: [Vec<(u32, u32)>; 7] = Default::default();
    for (key, intervals) in &record.days {
        let Some(index) = WEEKDAYS.iter().position(|d| d == key) else {
            return Err(FieldError::new(
                "days",
                format!("`{key}` is not a weekday: use mon, tue, wed, thu, fri, sat, sun"),
            ));
        };
        let mut parsed = Vec::with_capacity(intervals.len());
        for interval in intervals {
            let [start, end] = interval.as_slice() else {
                return Err(FieldError::new("days", format!("{key}: each interval is [\"HH:MM\", \"HH:MM\"]")));
            };
            let (Some(start), Some(end)) = (time_of_day(start), time_of_day(end)) else {
                return Err(FieldError::new("days", format!("{key}: times are HH:MM from 00:00 to 24:00")));
            };
            if end <= start {
                return Err(FieldError::new(
                    "days",
                    format!("{key}: an interval must end after it starts (an overnight shift is two intervals)"),
                ));
            }
            parsed.push((start, end));
        }
        parsed.sort_unstable();
        if parsed.windows(2).any(|w| w[1].0 < w[0].1) {
            return Err(FieldError::new("days", format!("{key}: intervals overlap")));
        }
        week[index] = parsed;
    }
    Ok(week)
}

/// `HH:MM` as seconds of the day; `24:00` is the end of the day.
fn time_of_day(raw: &str) -> Option<u32> {
    let (h, m) = raw.split_once(':')?;
    if h.len() != 2 || m.len() != 2 || !h.bytes().chain(m.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    match (h, m) {
        (24, 0) => Some(DAY_SECONDS),
        (0..=23, 0..=59) => Some(h * 3600 + m * 60),
        _ => None,
    }
}

/// Each holiday exactly `YYYY-MM-DD` (chrono alone also reads `2026- 1- 5` and signed years,
/// which would be stored and answered as given).
fn parse_holidays(raw: &[String]) -> Result<BTreeSet<NaiveDate>, FieldError> {
    raw.iter()
        .map(|d| {
            let shape = d.len() == 10
                && d.bytes().enumerate().all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() });
            NaiveDate::parse_from_str(d, "%Y-%m-%d")
                .ok()
                .filter(|_| shape)
                .ok_or_else(|| FieldError::new("holidays", format!("`{d}` is not a date (YYYY-MM-DD)")))
        })
        .collect()
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;
