//! How a report reads its period from the rollup (docs/architecture.md, "Reports"): the whole UTC
//! days of the period are tiled by aligned blocks of 1, 4, 16 or 64 days whose counts are stored
//! per duration bucket (with the facts of those days not folded into them yet), the partial first
//! and last days are read from the facts, and a
//! nearest-rank percentile is found in the bucket where the running count reaches its rank, then
//! read exactly from that bucket's facts ([`locate_rank`]).

use time::{Date, Duration, OffsetDateTime, Time};

/// The block lengths in days, by level (the stored `conversation_rollups.level`).
pub const BLOCK_DAYS: [i64; 4] = [1, 4, 16, 64];

/// One stored block: `level` of [`BLOCK_DAYS`], starting on UTC day `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RollupBlock {
    /// Index into [`BLOCK_DAYS`].
    pub level: i16,
    /// Its first UTC day.
    pub start: Date,
}

/// What a period is read from: rollup blocks and the spans read from the facts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeriodPlan {
    /// Blocks that tile the period's whole UTC days, without overlap.
    pub blocks: Vec<RollupBlock>,
    /// `[from, to)` spans of the period outside those days (at most two).
    pub spans: Vec<(OffsetDateTime, OffsetDateTime)>,
}

impl PeriodPlan {
    /// `[from, to)` of the whole days the blocks cover, if any: the facts of those days not yet
    /// folded into the blocks are read beside them.
    pub fn whole_days(&self) -> Option<(OffsetDateTime, OffsetDateTime)> {
        let (first, last) = (self.blocks.first()?, self.blocks.last()?);
        let end = last.start + Duration::days(BLOCK_DAYS[last.level as usize]);
        Some((first.start.midnight().assume_utc(), end.midnight().assume_utc()))
    }
}

/// Days since 1970-01-01, on which blocks are aligned (as in the migration's SQL).
fn day_number(d: Date) -> i64 {
    i64::from(d.to_julian_day()) - 2_440_588
}

/// The blocks and spans of `[since, until)`.
pub fn plan_period(since: OffsetDateTime, until: OffsetDateTime) -> PeriodPlan {
    let (since, until) = (since.to_offset(time::UtcOffset::UTC), until.to_offset(time::UtcOffset::UTC));
    if since >= until {
        return PeriodPlan::default();
    }
    let first_whole = if since.time() == Time::MIDNIGHT { since.date() } else { since.date() + Duration::days(1) };
    let end_whole = until.date();
    if first_whole >= end_whole {
        return PeriodPlan { blocks: Vec::new(), spans: vec![(since, until)] };
    }
    let mut spans = Vec::new();
    let first_at = first_whole.midnight().assume_utc();
    if since < first_at {
        spans.push((since, first_at));
    }
    let end_at = end_whole.midnight().assume_utc();
    if end_at < until {
        spans.push((end_at, until));
    }
    let (mut d, end) = (day_number(first_whole), day_number(end_whole));
    let mut blocks = Vec::new();
    while d < end {
        // The longest block that starts at `d` (aligned) and ends by `end`.
        let level =
            (0..BLOCK_DAYS.len()).rev().find(|&l| d % BLOCK_DAYS[l] == 0 && d + BLOCK_DAYS[l] <= end).unwrap_or(0);
        blocks.push(RollupBlock {
            level: level as i16,
            start: first_whole + Duration::days(d - day_number(first_whole)),
        });
        d += BLOCK_DAYS[level];
    }
    PeriodPlan { blocks, spans }
}

/// The nearest rank of percentile `p` among `n` values, 1-based, computed as PostgreSQL's
/// `percentile_disc` does (`ceil(p * n)` in double precision, at least 1).
pub fn nearest_rank(p: f64, n: i64) -> i64 {
    ((p * n as f64).ceil() as i64).clamp(1, n.max(1))
}

/// The bucket holding the `rank`-th smallest value, given each bucket's count in ascending bucket
/// order, and the value's rank within that bucket (1-based). `None` when the counts hold fewer.
pub fn locate_rank(counts: &[(i16, i64)], rank: i64) -> Option<(i16, i64)> {
    let mut below = 0;
    for &(bucket, n) in counts {
        if rank <= below + n {
            return Some((bucket, rank - below));
        }
        below += n;
    }
    None
}

/// The `pos`-th smallest of `values` (1-based; their order changes), if there are that many.
pub fn value_at_rank(values: &mut [i64], pos: i64) -> Option<i64> {
    let i = usize::try_from(pos).ok()?.checked_sub(1)?;
    if i >= values.len() {
        return None;
    }
    Some(*values.select_nth_unstable(i).1)
}

#[cfg(test)]
mod tests {
    use time::macros::{date, datetime};

    use super::*;

    fn days(plan: &PeriodPlan) -> Vec<(Date, i64)> {
        plan.blocks.iter().map(|b| (b.start, BLOCK_DAYS[b.level as usize])).collect()
    }

    #[test]
    fn whole_days_are_tiled_by_aligned_blocks_without_gap_or_overlap() {
        let plan = plan_period(datetime!(2026-08-28 13:05 UTC), datetime!(2026-11-26 23:10 UTC));
        assert_eq!(
            plan.spans,
            [
                (datetime!(2026-08-28 13:05 UTC), datetime!(2026-08-29 00:00 UTC)),
                (datetime!(2026-11-26 00:00 UTC), datetime!(2026-11-26 23:10 UTC))
            ]
        );
        let tiles = days(&plan);
        let mut next = date!(2026 - 08 - 29);
        for (start, len) in &tiles {
            assert_eq!(*start, next, "{tiles:?}");
            assert_eq!(day_number(*start) % len, 0, "aligned: {start} {len}");
            next = *start + Duration::days(*len);
        }
        assert_eq!(next, date!(2026 - 11 - 26));
        assert_eq!(plan.whole_days(), Some((datetime!(2026-08-29 00:00 UTC), datetime!(2026-11-26 00:00 UTC))));
        assert!(tiles.len() <= 16, "{}", tiles.len());
    }

    #[test]
    fn a_period_inside_one_day_is_read_from_the_facts_and_midnights_need_no_span() {
        let plan = plan_period(datetime!(2026-11-26 01:00 UTC), datetime!(2026-11-26 02:00 UTC));
        assert!(plan.blocks.is_empty());
        assert_eq!((plan.spans.len(), plan.whole_days()), (1, None));
        let plan = plan_period(datetime!(2026-11-25 00:00 UTC), datetime!(2026-11-27 00:00 UTC));
        assert!(plan.spans.is_empty());
        assert_eq!(days(&plan), [(date!(2026 - 11 - 25), 1), (date!(2026 - 11 - 26), 1)]);
        let plan = plan_period(datetime!(2026-11-25 06:00 +06:00), datetime!(2026-11-26 00:00 UTC));
        assert_eq!((days(&plan), plan.spans.len()), (vec![(date!(2026 - 11 - 25), 1)], 0));
        assert_eq!(day_number(date!(1970 - 01 - 01)), 0);
    }

    #[test]
    fn ranks_are_those_of_percentile_disc_and_land_in_their_bucket() {
        assert_eq!([1, 2, 5, 10, 11].map(|n| nearest_rank(0.5, n)), [1, 1, 3, 5, 6]);
        assert_eq!([1, 2, 5, 10, 11].map(|n| nearest_rank(0.9, n)), [1, 2, 5, 9, 10]);
        let counts = [(0, 2), (3, 0), (7, 5), (9, 1)];
        assert_eq!(locate_rank(&counts, 1), Some((0, 1)));
        assert_eq!(locate_rank(&counts, 3), Some((7, 1)));
        assert_eq!(locate_rank(&counts, 7), Some((7, 5)));
        assert_eq!(locate_rank(&counts, 8), Some((9, 1)));
        assert_eq!(locate_rank(&counts, 9), None);
        let mut in_bucket = vec![40, 33, 40, 35];
        assert_eq!(
            [1, 2, 3, 4].map(|p| value_at_rank(&mut in_bucket.clone(), p)),
            [Some(33), Some(35), Some(40), Some(40)]
        );
        assert_eq!((value_at_rank(&mut in_bucket, 0), value_at_rank(&mut in_bucket, 5)), (None, None));
    }
}
