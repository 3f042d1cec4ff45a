//! A destination's health after a batch of attempts: healthy again, failing since when, or gone
//! (`410`). The queue adapter applies the verdicts to the stored `failing_since` and decides
//! deactivation with [`super::retry::should_deactivate`].

use std::collections::BTreeMap;

use time::OffsetDateTime;

use super::{AttemptRecord, DestinationEffect};

/// A destination whose last attempts in the batch failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailingDestination {
    /// The destination.
    pub id: i64,
    /// The first failure after its last success in the batch.
    pub first_failure: OffsetDateTime,
    /// A success came before it in the batch: the stored failure clock restarts at `first_failure`.
    pub reset: bool,
    /// Its latest attempt in the batch.
    pub last_attempt: OffsetDateTime,
}

/// Per destination of a batch: whether it ends healthy or failing, and 410 answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DestinationVerdicts {
    /// Destinations whose last attempt in the batch succeeded, in id order.
    pub healthy: Vec<i64>,
    /// Destinations whose batch ends failing, in id order.
    pub failing: Vec<FailingDestination>,
    /// Destinations that answered `410 Gone`, with the time.
    pub gone: Vec<(i64, OffsetDateTime)>,
}

/// The verdicts of a batch of attempts, taken in attempt time order.
pub fn verdicts(records: &[AttemptRecord]) -> DestinationVerdicts {
    struct Seen {
        reset: bool,
        first_failure: Option<OffsetDateTime>,
        last: OffsetDateTime,
        gone: Option<OffsetDateTime>,
    }
    let mut sorted: Vec<&AttemptRecord> = records.iter().collect();
    sorted.sort_by_key(|r| r.attempted_at);
    let mut per: BTreeMap<i64, Seen> = BTreeMap::new();
    for r in sorted {
        let e = per.entry(r.destination_id.0).or_insert(Seen {
            reset: false,
            first_failure: None,
            last: r.attempted_at,
            gone: None,
        });
        e.last = r.attempted_at;
        match r.effect {
            DestinationEffect::Healthy => {
                e.reset = true;
                e.first_failure = None;
            }
            DestinationEffect::Failing => {
                e.first_failure.get_or_insert(r.attempted_at);
            }
            DestinationEffect::Gone => {
                e.first_failure.get_or_insert(r.attempted_at);
                e.gone = Some(r.attempted_at);
            }
        }
    }
    let mut v = DestinationVerdicts::default();
    for (id, seen) in per {
        match seen.first_failure {
            None => v.healthy.push(id),
            Some(first_failure) => {
                v.failing.push(FailingDestination { id, first_failure, reset: seen.reset, last_attempt: seen.last })
            }
        }
        if let Some(at) = seen.gone {
            v.gone.push((id, at));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhooks::{AttemptTrigger, DeliveryId, DeliveryStatus, DestinationId};
    use crate::workspace::WorkspaceId;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-03-01 10:00:00 UTC);

    fn rec(dest: i64, secs: i64, effect: DestinationEffect) -> AttemptRecord {
        AttemptRecord {
            delivery_id: DeliveryId(1),
            workspace_id: WorkspaceId(1),
            destination_id: DestinationId(dest),
            attempt_number: 1,
            trigger: AttemptTrigger::Scheduled,
            attempted_at: NOW + time::Duration::seconds(secs),
            status_code: Some(500),
            error: None,
            duration_ms: 1,
            response_excerpt: String::new(),
            next_attempt_at: None,
            status: DeliveryStatus::Pending,
            effect,
        }
    }

    #[test]
    fn a_success_resets_the_failure_clock() {
        let v = verdicts(&[
            rec(1, 0, DestinationEffect::Failing),
            rec(1, 1, DestinationEffect::Healthy),
            rec(2, 0, DestinationEffect::Failing),
            rec(2, 2, DestinationEffect::Healthy),
            rec(2, 3, DestinationEffect::Failing),
            rec(3, 0, DestinationEffect::Gone),
        ]);
        assert_eq!(v.healthy, vec![1]);
        let failing: Vec<(i64, bool)> = v.failing.iter().map(|f| (f.id, f.reset)).collect();
        assert_eq!(failing, vec![(2, true), (3, false)]);
        assert_eq!(v.gone.len(), 1);
    }

    #[test]
    fn attempts_are_taken_in_time_order_whatever_the_batch_order() {
        let v = verdicts(&[rec(1, 5, DestinationEffect::Failing), rec(1, 1, DestinationEffect::Failing)]);
        assert_eq!(
            v.failing,
            vec![FailingDestination {
                id: 1,
                first_failure: NOW + time::Duration::seconds(1),
                reset: false,
                last_attempt: NOW + time::Duration::seconds(5),
            }]
        );
    }
}
