//! How first response times spread over the period: the report's settings page draws it as a
//! histogram. The adapter loads the first response durations of the period (wall or business
//! seconds, as the report's query says); [`first_response_distribution`] counts them per bucket.

/// The upper bounds (exclusive, seconds) of every bucket but the last, which is open.
pub const BUCKET_BOUNDS: [i64; 6] = [60, 5 * 60, 15 * 60, 3600, 4 * 3600, 24 * 3600];

/// The buckets' labels, shortest first: `<1m`, `1–5m`, `5–15m`, `15–60m`, `1–4h`, `4–24h`, `>24h`.
pub const BUCKET_LABELS: [&str; 7] = ["<1m", "1–5m", "5–15m", "15–60m", "1–4h", "4–24h", ">24h"];

/// One bucket of the histogram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    /// Its label ([`BUCKET_LABELS`]).
    pub label: &'static str,
    /// Durations from (inclusive), in seconds.
    pub from_seconds: i64,
    /// Durations up to (exclusive), in seconds; `None` for the open last bucket.
    pub to_seconds: Option<i64>,
    /// First responses by a member in the bucket.
    pub human: i64,
    /// First responses by an AI agent in the bucket.
    pub ai: i64,
}

/// The first response times of a period, by bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstResponseDistribution {
    /// Every bucket, shortest first, empty ones included.
    pub buckets: Vec<Bucket>,
}

impl FirstResponseDistribution {
    /// The first responses counted, by members and by AI agents.
    pub fn totals(&self) -> (i64, i64) {
        self.buckets.iter().fold((0, 0), |(h, a), b| (h + b.human, a + b.ai))
    }
}

/// The durations the distribution is made of, as loaded for the period.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FirstResponseDurations {
    /// Seconds from each cycle's start to a member's first response.
    pub human: Vec<i64>,
    /// Seconds from each cycle's start to an AI agent's first response.
    pub ai: Vec<i64>,
}

/// The index of the bucket holding a duration of `seconds` (a negative one counts as 0).
pub fn bucket_of(seconds: i64) -> usize {
    BUCKET_BOUNDS.iter().position(|bound| seconds < *bound).unwrap_or(BUCKET_BOUNDS.len())
}

/// Counts each duration in its bucket.
pub fn first_response_distribution(durations: &FirstResponseDurations) -> FirstResponseDistribution {
    let mut buckets: Vec<Bucket> = BUCKET_LABELS
        .iter()
        .enumerate()
        .map(|(i, label)| Bucket {
            label,
            from_seconds: if i == 0 { 0 } else { BUCKET_BOUNDS[i - 1] },
            to_seconds: BUCKET_BOUNDS.get(i).copied(),
            human: 0,
            ai: 0,
        })
        .collect();
    for s in &durations.human {
        buckets[bucket_of(*s)].human += 1;
    }
    for s in &durations.ai {
        buckets[bucket_of(*s)].ai += 1;
    }
    FirstResponseDistribution { buckets }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_duration_lands_in_the_bucket_whose_bounds_hold_it() {
        assert_eq!(
            [0, 59, 60, 299, 300, 899, 900, 3599, 3600, 14_399, 14_400, 86_399, 86_400, 10_000_000, -5].map(bucket_of),
            [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 0]
        );
    }

    #[test]
    fn members_and_ai_agents_are_counted_apart_and_empty_buckets_stay() {
        let d = first_response_distribution(&FirstResponseDurations {
            human: vec![30, 45, 120, 7200, 90_000],
            ai: vec![5, 600],
        });
        let counts: Vec<(&str, i64, i64)> = d.buckets.iter().map(|b| (b.label, b.human, b.ai)).collect();
        assert_eq!(
            counts,
            [
                ("<1m", 2, 1),
                ("1–5m", 1, 0),
                ("5–15m", 0, 1),
                ("15–60m", 0, 0),
                ("1–4h", 1, 0),
                ("4–24h", 0, 0),
                (">24h", 1, 0)
            ]
        );
        assert_eq!(d.totals(), (5, 2));
        assert_eq!((d.buckets[0].from_seconds, d.buckets[0].to_seconds), (0, Some(60)));
        assert_eq!((d.buckets[6].from_seconds, d.buckets[6].to_seconds), (86_400, None));
    }
}
