use proptest::prelude::*;
use time::macros::datetime;
use time::Duration;

use super::*;

fn record(zone: &str, days: &[(&str, &[(&str, &str)])], holidays: &[&str]) -> BusinessHoursRecord {
    BusinessHoursRecord {
        timezone: zone.to_owned(),
        days: days
            .iter()
            .map(|(d, ivs)| {
                ((*d).to_owned(), ivs.iter().map(|(a, b)| vec![(*a).to_owned(), (*b).to_owned()]).collect())
            })
            .collect(),
        holidays: holidays.iter().map(|h| (*h).to_owned()).collect(),
    }
}

fn office(zone: &str, holidays: &[&str]) -> BusinessHours {
    let day: &[(&str, &str)] = &[("09:00", "17:00")];
    BusinessHours::from_record(&record(
        zone,
        &[("mon", day), ("tue", day), ("wed", day), ("thu", day), ("fri", day)],
        holidays,
    ))
    .expect("valid")
}

fn fields(r: &BusinessHoursRecord) -> Vec<String> {
    BusinessHours::from_record(r).expect_err("invalid").0.into_iter().map(|e| e.field).collect()
}

#[test]
fn none_set_counts_every_second() {
    let h = BusinessHours::always();
    let from = datetime!(2026-11-20 10:00:00 UTC);
    assert_eq!(h.business_seconds(from, from + Duration::hours(30)), 30 * 3600);
    assert_eq!(h.add_business_seconds(from, 90), from + Duration::seconds(90));
    assert_eq!(h.business_seconds(from, from - Duration::hours(1)), 0);
}

/// Sub-millisecond parts never make business time differ from wall-clock time where every
/// moment counts: the report with `business_hours=true` and none set equals the wall-clock one.
#[test]
fn where_every_moment_counts_business_seconds_are_the_wall_clock_seconds_exactly() {
    let from = datetime!(2026-11-20 10:00:10.0005 UTC);
    let to = datetime!(2026-11-20 10:00:20 UTC);
    let wall = (to - from).whole_seconds();
    assert_eq!(wall, 9);
    assert_eq!(BusinessHours::always().business_seconds(from, to), wall);
    // Inside the office's hours (a Friday, 11:00 Berlin): the same.
    assert_eq!(office("Europe/Berlin", &[]).business_seconds(from, to), wall);
    // Partly outside: never more than the wall clock.
    let evening = datetime!(2026-11-20 15:59:50.0005 UTC);
    let h = office("Europe/Berlin", &[]);
    assert!(h.business_seconds(evening, evening + Duration::minutes(5)) <= 300);
}

#[test]
fn a_record_without_intervals_is_none_set() {
    let h = BusinessHours::from_record(&record("Europe/Berlin", &[("mon", &[])], &["2026-12-25"])).expect("valid");
    assert!(h.is_always());
    assert!(BusinessHours::from_record(&BusinessHoursRecord::none_set()).expect("valid").is_always());
}

#[test]
fn a_weekend_between_friday_and_monday_counts_nothing() {
    let h = office("Europe/Berlin", &[]);
    // Friday 2026-11-20 16:00 Berlin (15:00 UTC) to Monday 10:00 Berlin (09:00 UTC): 1 h + 1 h.
    assert_eq!(h.business_seconds(datetime!(2026-11-20 15:00:00 UTC), datetime!(2026-11-23 09:00:00 UTC)), 7200);
    // Entirely on Saturday: 0.
    assert_eq!(h.business_seconds(datetime!(2026-11-21 09:00:00 UTC), datetime!(2026-11-21 15:00:00 UTC)), 0);
}

#[test]
fn a_holiday_has_no_hours() {
    let h = office("UTC", &["2026-11-23"]);
    assert_eq!(h.business_seconds(datetime!(2026-11-23 00:00:00 UTC), datetime!(2026-11-24 10:00:00 UTC)), 3600);
    assert_eq!(
        h.add_business_seconds(datetime!(2026-11-20 16:30:00 UTC), 3600),
        datetime!(2026-11-24 09:30:00 UTC),
        "Friday's last half hour, the weekend and the Monday holiday, then half an hour on Tuesday"
    );
}

#[test]
fn dst_days_are_as_long_as_they_really_are() {
    let all_day: &[(&str, &str)] = &[("00:00", "24:00")];
    let h = BusinessHours::from_record(&record("Europe/Berlin", &[("sun", all_day)], &[])).expect("valid");
    // 2026-03-29: clocks go 02:00 -> 03:00 (23 h day); 2026-10-25: 03:00 -> 02:00 (25 h day).
    let spring = h.business_seconds(datetime!(2026-03-28 00:00:00 UTC), datetime!(2026-03-30 00:00:00 UTC));
    assert_eq!(spring, 23 * 3600);
    let autumn = h.business_seconds(datetime!(2026-10-24 00:00:00 UTC), datetime!(2026-10-27 00:00:00 UTC));
    assert_eq!(autumn, 25 * 3600);
}

#[test]
fn an_interval_that_opens_in_the_spring_gap_opens_when_the_gap_ends() {
    let h =
        BusinessHours::from_record(&record("Europe/Berlin", &[("sun", &[("02:30", "04:00")])], &[])).expect("valid");
    // 03:00 CEST is 01:00 UTC; 04:00 CEST is 02:00 UTC.
    assert_eq!(h.business_seconds(datetime!(2026-03-29 00:00:00 UTC), datetime!(2026-03-29 12:00:00 UTC)), 3600);
    assert_eq!(h.add_business_seconds(datetime!(2026-03-29 00:00:00 UTC), 60), datetime!(2026-03-29 01:01:00 UTC));
}

#[test]
fn intervals_meeting_in_the_repeated_autumn_hour_are_not_counted_twice() {
    let h = BusinessHours::from_record(&record(
        "Europe/Berlin",
        &[("sun", &[("00:00", "02:30"), ("02:30", "05:00")])],
        &[],
    ))
    .expect("valid");
    // 00:00 CEST (22:00 UTC the day before) to 05:00 CET (04:00 UTC): 6 real hours.
    assert_eq!(h.business_seconds(datetime!(2026-10-24 12:00:00 UTC), datetime!(2026-10-25 12:00:00 UTC)), 6 * 3600);
}

#[test]
fn adding_business_time_skips_closed_hours_in_the_zone() {
    let h = office("America/New_York", &[]);
    // Friday 2026-11-20 16:30 EST = 21:30 UTC; an hour later in business time is Monday 09:30 EST.
    assert_eq!(h.add_business_seconds(datetime!(2026-11-20 21:30:00 UTC), 3600), datetime!(2026-11-23 14:30:00 UTC));
    // Starting before opening on a working day.
    assert_eq!(h.add_business_seconds(datetime!(2026-11-23 05:00:00 UTC), 60), datetime!(2026-11-23 14:01:00 UTC));
    // Exactly the rest of the day ends at closing time.
    assert_eq!(h.add_business_seconds(datetime!(2026-11-23 21:00:00 UTC), 3600), datetime!(2026-11-23 22:00:00 UTC));
}

#[test]
fn bad_fields_are_named() {
    assert_eq!(fields(&record("Mars/Olympus", &[], &[])), ["timezone"]);
    assert_eq!(fields(&record("UTC", &[("mon", &[("17:00", "09:00")])], &[])), ["days"]);
    assert_eq!(fields(&record("UTC", &[("mon", &[("09:00", "09:00")])], &[])), ["days"]);
    assert_eq!(fields(&record("UTC", &[("mon", &[("09:00", "12:00"), ("11:00", "13:00")])], &[])), ["days"]);
    assert_eq!(fields(&record("UTC", &[("mon", &[("9:00", "12:00")])], &[])), ["days"]);
    assert_eq!(fields(&record("UTC", &[("mon", &[("09:00", "24:01")])], &[])), ["days"]);
    assert_eq!(fields(&record("UTC", &[("monday", &[("09:00", "12:00")])], &[])), ["days"]);
    assert_eq!(fields(&record("UTC", &[], &["2026-02-30"])), ["holidays"]);
    assert_eq!(fields(&record("UTC", &[], &["26-1-1"])), ["holidays"]);
    assert_eq!(fields(&record("Nowhere", &[("tue", &[("10:00", "08:00")])], &["x"])), ["timezone", "days", "holidays"]);
    let odd = BusinessHoursRecord {
        days: [("mon".to_owned(), vec![vec!["09:00".to_owned()]])].into(),
        ..record("UTC", &[], &[])
    };
    assert_eq!(fields(&odd), ["days"]);
}

#[test]
fn touching_intervals_and_the_end_of_day_are_valid() {
    let h = BusinessHours::from_record(&record("UTC", &[("sat", &[("12:00", "24:00"), ("08:00", "12:00")])], &[]))
        .expect("valid");
    assert_eq!(h.business_seconds(datetime!(2026-11-21 00:00:00 UTC), datetime!(2026-11-22 00:00:00 UTC)), 16 * 3600);
}

proptest! {
    #[test]
    fn adding_then_measuring_gives_the_amount_back(start in 0i64..(3 * 365 * 86_400), amount in 0i64..(30 * 86_400)) {
        let h = office("Europe/Berlin", &["2026-12-25", "2027-01-01"]);
        let from = datetime!(2025-06-01 00:00:00 UTC) + Duration::seconds(start);
        let due = h.add_business_seconds(from, amount);
        prop_assert_eq!(h.business_seconds(from, due), amount);
    }

    #[test]
    fn business_time_never_exceeds_wall_time_and_adds_up(a in 0i64..(400 * 86_400), b in 0i64..(20 * 86_400), c in 0i64..(20 * 86_400)) {
        let h = office("America/New_York", &["2026-07-03"]);
        let t0 = datetime!(2026-01-01 00:00:00 UTC) + Duration::seconds(a);
        let t1 = t0 + Duration::seconds(b);
        let t2 = t1 + Duration::seconds(c);
        let whole = h.business_seconds(t0, t2);
        prop_assert!(whole <= b + c);
        prop_assert_eq!(whole, h.business_seconds(t0, t1) + h.business_seconds(t1, t2));
    }
}

#[test]
fn a_holiday_is_exactly_a_yyyy_mm_dd_date() {
    for bad in ["2026- 1- 5", "+999-01-01", "-001-01-01", "2026-1-05", "2026-02-30"] {
        assert_eq!(fields(&record("UTC", &[], &[bad])), ["holidays"], "{bad}");
    }
    office("UTC", &["2026-12-25"]);
}
