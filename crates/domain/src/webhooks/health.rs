//! A destination's health after a batch of attempts: healthy again, failing since when, or gone
//! (`410`); which destinations that deactivates ([`deactivations`], with
//! [`super::retry::should_deactivate`]), and what each deactivation records and announces. The
//! queue adapter applies the verdicts to the stored `failing_since`, then applies the
//! deactivations.

use std::collections::BTreeMap;
use std::time::Duration;

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::notices::HealthNotice;
use super::retry::should_deactivate;
use super::{AttemptRecord, DestinationEffect, DomainEvent, WebhookDestination, WebhookRecord};
use crate::audit::{AuditAction, AuditContext, AuditEntry, AuditTarget};
use crate::workspace::WorkspaceId;

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

impl FailingDestination {
    /// The failure clock to store, given the stored one (`failing_since`, read under the
    /// destination's lock): restarted at `first_failure` after a success in the batch, else the
    /// earliest start kept, or `first_failure` when the clock was not running.
    pub fn failing_since(&self, stored: Option<OffsetDateTime>) -> OffsetDateTime {
        match stored {
            Some(since) if !self.reset => since,
            _ => self.first_failure,
        }
    }
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

/// Failed attempts in a row after which a destination is *failing* (`webhook.failing`).
pub const FAILING_AFTER: i32 = 4;

/// A destination's stored run of failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streak {
    /// Failed attempts since its last success.
    pub failed_in_a_row: i32,
    /// `webhook.failing` was emitted for this run and no success came since.
    pub failing: bool,
}

/// An event a destination's health change emits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealthEvent {
    /// Became failing (`webhook.failing`).
    Failing,
    /// Succeeded again after failing (`webhook.recovered`).
    Recovered,
}

impl HealthEvent {
    /// The event recorded, about the destination's record (sent to its workspace's other
    /// destinations).
    pub fn event(self, destination: WebhookRecord) -> DomainEvent {
        match self {
            Self::Failing => DomainEvent::WebhookFailing(destination),
            Self::Recovered => DomainEvent::WebhookRecovered(destination),
        }
    }

    /// The e-mail the workspace's admins get about it: one when the destination starts failing,
    /// none when it recovers.
    pub fn notice(self) -> Option<HealthNotice> {
        match self {
            Self::Failing => Some(HealthNotice::Failing),
            Self::Recovered => None,
        }
    }
}

/// A 429 to one of several deliveries in flight at once: a receiver that takes fewer at a time
/// says so, and the pace gives it fewer (`Pace::after` halves the deliveries in flight). That is
/// flow control, not failure: it neither extends nor ends a run of failures, so a healthy narrow
/// receiver is never reported `failing` (nor its admins e-mailed) while the pace finds its width.
/// A 429 to a delivery sent alone, a 503, a timeout or a refused connection counts as ever.
fn asks_for_fewer_at_once(r: &AttemptRecord) -> bool {
    r.status_code == Some(429) && r.window >= 2
}

/// One destination's run of failures after a batch, and the events it emits, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreakChange {
    /// The destination.
    pub id: i64,
    /// The run after the batch.
    pub streak: Streak,
    /// What to emit.
    pub events: Vec<HealthEvent>,
}

/// The runs of failures after a batch of attempts (taken in time order), from the stored ones
/// (a destination missing from `stored` had none): only the destinations whose run changed or
/// that emit something.
pub fn streaks(records: &[AttemptRecord], stored: &BTreeMap<i64, Streak>) -> Vec<StreakChange> {
    let mut sorted: Vec<&AttemptRecord> = records.iter().collect();
    sorted.sort_by_key(|r| r.attempted_at);
    let mut now: BTreeMap<i64, StreakChange> = BTreeMap::new();
    for r in sorted {
        let id = r.destination_id.0;
        let c = now.entry(id).or_insert_with(|| StreakChange {
            id,
            streak: stored.get(&id).copied().unwrap_or(Streak { failed_in_a_row: 0, failing: false }),
            events: Vec::new(),
        });
        match r.effect {
            DestinationEffect::Healthy => {
                if c.streak.failing {
                    c.events.push(HealthEvent::Recovered);
                }
                c.streak = Streak { failed_in_a_row: 0, failing: false };
            }
            // The pace's business, not the destination's health.
            DestinationEffect::Failing if asks_for_fewer_at_once(r) => {}
            DestinationEffect::Failing | DestinationEffect::Gone => {
                c.streak.failed_in_a_row = c.streak.failed_in_a_row.saturating_add(1);
                if c.streak.failed_in_a_row >= FAILING_AFTER && !c.streak.failing {
                    c.streak.failing = true;
                    c.events.push(HealthEvent::Failing);
                }
            }
        }
    }
    // A run that ends where it started may still have emitted (four failures and a success in
    // one batch: failing, then recovered).
    now.into_values()
        .filter(|c| {
            !c.events.is_empty()
                || stored.get(&c.id).copied().unwrap_or(Streak { failed_in_a_row: 0, failing: false }) != c.streak
        })
        .collect()
}

/// A failing destination's stored health once the batch's verdict is applied: the facts
/// [`deactivations`] decides on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredFailure {
    /// The destination.
    pub id: i64,
    /// Whether it still takes deliveries.
    pub active: bool,
    /// Since when all its deliveries have failed.
    pub failing_since: Option<OffsetDateTime>,
}

/// A destination to deactivate, why (the note shown on it and in the record) and at what time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deactivation {
    /// The destination.
    pub id: i64,
    /// The deactivation note.
    pub reason: String,
    /// When: the attempt that decided it.
    pub at: OffsetDateTime,
}

impl Deactivation {
    /// Its record in the destination's workspace `ws`: `webhook.disabled` by `system`, with the
    /// note as `details.reason`.
    pub fn audit(&self, ws: WorkspaceId) -> AuditEntry {
        AuditContext::system().entry(
            ws,
            AuditAction::WebhookDisabled,
            AuditTarget::webhook(Some(self.id)),
            serde_json::json!({ "reason": self.reason }),
        )
    }
}

/// The destinations a batch deactivates, each once, in the verdicts' order: every one that
/// answered `410 Gone`, and every active one whose deliveries have all failed for `after` by its
/// last attempt in the batch (`stored` as updated by the verdicts). Whether one is still active
/// when deactivated is the storage's to check under its lock (an inactive one stays as it is).
pub fn deactivations(verdicts: &DestinationVerdicts, stored: &[StoredFailure], after: Duration) -> Vec<Deactivation> {
    let mut out: Vec<Deactivation> = verdicts
        .gone
        .iter()
        .map(|&(id, at)| Deactivation { id, reason: format!("the endpoint answered 410 Gone at {}", rfc3339(at)), at })
        .collect();
    for failing in &verdicts.failing {
        let Some(health) = stored.iter().find(|h| h.id == failing.id) else { continue };
        let Some(since) = health.failing_since.filter(|_| health.active) else { continue };
        if should_deactivate(since, failing.last_attempt, after) && !out.iter().any(|d| d.id == failing.id) {
            let days = after.as_secs_f64() / 86400.0;
            out.push(Deactivation {
                id: failing.id,
                reason: format!("every delivery failed for {days} days (since {})", rfc3339(since)),
                at: failing.last_attempt,
            });
        }
    }
    out
}

/// What a deactivated `destination` announces: `webhook.disabled` about its record (to the
/// workspace's other destinations) and the admins' notice with its note.
pub fn disabled_announcement(destination: &WebhookDestination) -> (DomainEvent, HealthNotice) {
    let reason = destination.disabled_reason.clone().unwrap_or_default();
    (DomainEvent::WebhookDisabled(WebhookRecord::from(destination.clone())), HealthNotice::Disabled { reason })
}

fn rfc3339(t: OffsetDateTime) -> String {
    t.format(&Rfc3339).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhooks::{AttemptTrigger, DeliveryId, DeliveryStatus, DestinationId};
    use crate::workspace::WorkspaceId;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-03-01 10:00:00 UTC);

    #[test]
    fn the_failure_clock_keeps_its_start_unless_a_success_restarts_it() {
        let first = datetime!(2026-01-01 12:00 UTC);
        let earlier = datetime!(2026-01-01 9:00 UTC);
        let running = FailingDestination { id: 1, first_failure: first, reset: false, last_attempt: first };
        assert_eq!(running.failing_since(Some(earlier)), earlier);
        assert_eq!(running.failing_since(None), first);
        let restarted = FailingDestination { reset: true, ..running };
        assert_eq!(restarted.failing_since(Some(earlier)), first);
        assert_eq!(restarted.failing_since(None), first);
    }

    #[test]
    fn admins_hear_when_a_destination_starts_failing_but_not_when_it_recovers() {
        assert_eq!(HealthEvent::Failing.notice(), Some(HealthNotice::Failing));
        assert_eq!(HealthEvent::Recovered.notice(), None);
    }

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
            pace: crate::webhooks::pace::PaceSignal::Neutral,
            window: 1,
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

    #[test]
    fn the_fourth_failure_in_a_row_emits_failing_once_and_a_success_recovered() {
        let f = DestinationEffect::Failing;
        let three: Vec<_> = (0..3).map(|i| rec(1, i, f)).collect();
        let c = streaks(&three, &BTreeMap::new());
        assert_eq!(c[0].streak, Streak { failed_in_a_row: 3, failing: false });
        assert!(c[0].events.is_empty());
        let stored = BTreeMap::from([(1, c[0].streak)]);
        let c = streaks(&[rec(1, 5, f), rec(1, 6, f)], &stored);
        assert_eq!(c[0].events, vec![HealthEvent::Failing], "once");
        assert_eq!(c[0].streak, Streak { failed_in_a_row: 5, failing: true });
        let stored = BTreeMap::from([(1, c[0].streak)]);
        let c = streaks(&[rec(1, 9, DestinationEffect::Healthy), rec(1, 10, DestinationEffect::Healthy)], &stored);
        assert_eq!(c[0].events, vec![HealthEvent::Recovered]);
        assert_eq!(c[0].streak, Streak { failed_in_a_row: 0, failing: false });
    }

    #[test]
    fn refusals_of_deliveries_sent_at_once_are_flow_control_not_failures() {
        let f = DestinationEffect::Failing;
        let refused = |secs, window| AttemptRecord { status_code: Some(429), window, ..rec(1, secs, f) };
        // A narrow receiver refusing five of sixteen sent at once: no run of failures.
        let at_once: Vec<_> = (0..5).map(|i| refused(i, 16)).collect();
        assert!(streaks(&at_once, &BTreeMap::new()).is_empty());
        // Nor does it end one.
        let stored = BTreeMap::from([(1, Streak { failed_in_a_row: 3, failing: false })]);
        assert!(streaks(&at_once, &stored).is_empty());
        // Refused one at a time, or a 503 beside others, it counts.
        let alone: Vec<_> = (0..4).map(|i| refused(i, 1)).collect();
        assert_eq!(streaks(&alone, &BTreeMap::new())[0].events, vec![HealthEvent::Failing]);
        let unavailable: Vec<_> =
            (0..4).map(|i| AttemptRecord { status_code: Some(503), window: 8, ..rec(1, i, f) }).collect();
        assert_eq!(streaks(&unavailable, &BTreeMap::new())[0].events, vec![HealthEvent::Failing]);
    }

    #[test]
    fn failing_and_recovering_within_one_batch_emits_both() {
        let f = DestinationEffect::Failing;
        let mut batch: Vec<_> = (0..4).map(|i| rec(1, i, f)).collect();
        batch.push(rec(1, 4, DestinationEffect::Healthy));
        let c = streaks(&batch, &BTreeMap::new());
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].events, vec![HealthEvent::Failing, HealthEvent::Recovered]);
        assert_eq!(c[0].streak, Streak { failed_in_a_row: 0, failing: false });
    }

    #[test]
    fn a_success_between_failures_restarts_the_count_and_unchanged_ones_are_left_out() {
        let f = DestinationEffect::Failing;
        let c = streaks(
            &[
                rec(1, 0, f),
                rec(1, 1, f),
                rec(1, 2, DestinationEffect::Healthy),
                rec(1, 3, f),
                rec(2, 0, DestinationEffect::Healthy),
            ],
            &BTreeMap::from([(1, Streak { failed_in_a_row: 2, failing: false })]),
        );
        assert_eq!(c.len(), 1, "2 was and stays healthy: {c:?}");
        assert_eq!(c[0].streak, Streak { failed_in_a_row: 1, failing: false });
    }

    fn failing(id: i64, last: OffsetDateTime) -> FailingDestination {
        FailingDestination { id, first_failure: last, reset: false, last_attempt: last }
    }

    #[test]
    fn gone_and_long_failing_active_destinations_are_deactivated_once_each() {
        const DAYS_5: Duration = Duration::from_secs(5 * 86400);
        let since = NOW - time::Duration::days(5);
        let v = DestinationVerdicts {
            healthy: vec![],
            failing: vec![failing(1, NOW), failing(2, NOW), failing(3, NOW), failing(4, NOW), failing(5, NOW)],
            gone: vec![(4, NOW - time::Duration::seconds(3))],
        };
        let stored = [
            StoredFailure { id: 1, active: true, failing_since: Some(since) },
            StoredFailure { id: 2, active: true, failing_since: Some(since + time::Duration::seconds(1)) },
            StoredFailure { id: 3, active: false, failing_since: Some(since) },
            StoredFailure { id: 4, active: true, failing_since: Some(since) },
            StoredFailure { id: 5, active: true, failing_since: None },
        ];
        let out = deactivations(&v, &stored, DAYS_5);
        let ids: Vec<i64> = out.iter().map(|d| d.id).collect();
        assert_eq!(ids, [4, 1], "the 410 first, then five days of failures; 2 is a second short, 3 inactive");
        assert_eq!(out[0].reason, "the endpoint answered 410 Gone at 2026-03-01T09:59:57Z");
        assert_eq!(out[1].reason, "every delivery failed for 5 days (since 2026-02-24T10:00:00Z)");
        assert_eq!(out[1].at, NOW);
        let audit = out[1].audit(WorkspaceId(7));
        assert_eq!(
            (audit.action, audit.context.actor.kind, audit.workspace_id, audit.target),
            (
                AuditAction::WebhookDisabled,
                crate::audit::ActorType::System,
                WorkspaceId(7),
                Some(AuditTarget::webhook(Some(1)))
            )
        );
        assert_eq!(audit.details, serde_json::json!({"reason": out[1].reason}));
    }
}
