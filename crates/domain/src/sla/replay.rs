//! A thread's past replayed through the SLA decisions the live path takes ([`decide_inbound`],
//! [`decide_sla`] and the breach timer's ticks), event by event, each decided at the time it
//! happened: the SLA a thread whose history was written at once (the demo generator's) would have
//! now, and the outcomes the reports would have recorded on the way.

use time::OffsetDateTime;

use super::clock::Hours;
use super::policy::SlaPolicy;
use super::tracking::{decide_inbound, decide_sla, InboundSlaFacts, SlaDecision, SlaFact, SlaThreadFacts, ThreadSla};
use crate::threads::ThreadStatus;

/// Something that happened to a thread, as its SLA hears of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlaEvent {
    /// A message of the contact (the first one creates the thread).
    Inbound,
    /// A message to the contact by a member or an AI agent ([`super::counts_as_response`]).
    Response,
    /// The thread's status was set (by a member, or by the lifecycle).
    Status(ThreadStatus),
}

/// What is known of a thread's past.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlaHistory {
    /// Its channel.
    pub channel_id: i64,
    /// The names of its labels now: those of every cycle but the first (a thread is created
    /// without labels; a label is added to it while a conversation runs).
    pub labels: Vec<String>,
    /// What happened, oldest first; a message before a status change at the same instant.
    pub events: Vec<(OffsetDateTime, SlaEvent)>,
}

/// What replaying a history leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlaReplay {
    /// The SLA of the thread's current cycle (`None`: no policy applied to it).
    pub sla: Option<ThreadSla>,
    /// Each cycle's outcome when it was settled (`true`: hit), for the reports' `sla` figures.
    pub outcomes: Vec<(OffsetDateTime, bool)>,
}

/// Replays `history` up to `now` with the workspace's `policies` (each from its `created_at`) and
/// business hours. The breach timer looks at each due time as it comes, before anything that
/// happens later; an inbound message reopens a `pending`, `snoozed` or `resolved` thread.
pub fn replay_sla(
    history: &SlaHistory,
    policies: &[SlaPolicy],
    business: &dyn Hours,
    now: OffsetDateTime,
) -> SlaReplay {
    let mut state = State { sla: None, outcomes: Vec::new() };
    let mut status: Option<ThreadStatus> = None;
    let mut had_inbound = false;
    for &(at, event) in &history.events {
        state.tick_until(business, at);
        match event {
            SlaEvent::Inbound => {
                let in_force: Vec<SlaPolicy> = policies.iter().filter(|p| p.created_at <= at).cloned().collect();
                let labels = if status.is_some() { history.labels.clone() } else { Vec::new() };
                let facts = InboundSlaFacts {
                    status_before: status,
                    had_inbound,
                    at,
                    thread: SlaThreadFacts { channel_id: history.channel_id, labels },
                    policies: &in_force,
                };
                let decision = decide_inbound(state.sla.as_ref(), &facts, business, at);
                state.apply(decision, at);
                status = Some(ThreadStatus::Open);
                had_inbound = true;
            }
            SlaEvent::Response => {
                if let Some(before) = &state.sla {
                    let decision = decide_sla(before, SlaFact::Response, business, at);
                    state.apply(decision, at);
                }
            }
            SlaEvent::Status(to) => {
                let from = status.unwrap_or(ThreadStatus::Open);
                if from != to {
                    if let Some(before) = &state.sla {
                        let decision = decide_sla(before, SlaFact::StatusChanged { from, to }, business, at);
                        state.apply(decision, at);
                    }
                    status = Some(to);
                }
            }
        }
    }
    state.tick_until(business, now);
    SlaReplay { sla: state.sla, outcomes: state.outcomes }
}

struct State {
    sla: Option<ThreadSla>,
    outcomes: Vec<(OffsetDateTime, bool)>,
}

impl State {
    fn apply(&mut self, decision: SlaDecision, at: OffsetDateTime) {
        if let Some(hit) = decision.settled(self.sla.as_ref()) {
            self.outcomes.push((at, hit));
        }
        self.sla = decision.sla;
    }

    /// The breach timer at each due time up to `until`: every tick misses at least the target it
    /// was set for, so the loop ends.
    fn tick_until(&mut self, business: &dyn Hours, until: OffsetDateTime) {
        while let Some(check) = self.sla.as_ref().and_then(ThreadSla::next_check_at).filter(|c| *c <= until) {
            let Some(before) = &self.sla else { return };
            let decision = decide_sla(before, SlaFact::Tick, business, check);
            if !decision.changes(Some(before)) {
                return;
            }
            self.apply(decision, check);
        }
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;
    use time::Duration;

    use super::*;
    use crate::sla::{SlaTarget, SlaTargets, WallClock};

    const T0: OffsetDateTime = datetime!(2026-11-20 10:00:00 UTC);

    fn at(min: i64) -> OffsetDateTime {
        T0 + Duration::minutes(min)
    }

    fn policy(id: i64, labels: &[&str], created_at: OffsetDateTime) -> SlaPolicy {
        SlaPolicy {
            id,
            name: format!("p{id}"),
            targets: SlaTargets { first_response: Some(600), next_response: Some(1200), resolution: Some(7200) },
            business_hours: false,
            channel_ids: Vec::new(),
            labels: labels.iter().map(|l| (*l).to_owned()).collect(),
            created_at,
        }
    }

    fn history(events: &[(i64, SlaEvent)]) -> SlaHistory {
        SlaHistory {
            channel_id: 1,
            labels: vec!["vip".into()],
            events: events.iter().map(|(m, e)| (at(*m), *e)).collect(),
        }
    }

    use SlaEvent::{Inbound, Response, Status};

    #[test]
    fn a_conversation_answered_and_resolved_in_time_is_one_hit_when_resolved() {
        let h =
            history(&[(0, Inbound), (5, Response), (8, Inbound), (20, Response), (30, Status(ThreadStatus::Resolved))]);
        let r = replay_sla(&h, &[policy(1, &[], T0)], &WallClock, at(600));
        assert_eq!(r.outcomes, [(at(30), true)]);
        let sla = r.sla.expect("sla");
        assert!(sla.responded && sla.resolved && sla.breaches.is_empty());
        assert_eq!(sla.next_check_at(), None);
    }

    #[test]
    fn the_timer_misses_a_target_at_its_due_time_and_the_cycle_counts_once() {
        let h = history(&[(0, Inbound), (25, Response), (30, Inbound)]);
        let r = replay_sla(&h, &[policy(1, &[], T0)], &WallClock, at(600));
        assert_eq!(r.outcomes, [(at(10), false)], "missed by the timer when due, not at the late answer");
        let sla = r.sla.expect("sla");
        assert_eq!(sla.breaches, [SlaTarget::FirstResponse, SlaTarget::NextResponse, SlaTarget::Resolution]);
        assert_eq!(sla.next_check_at(), None, "nothing left for the live timer");
    }

    #[test]
    fn a_reopened_thread_starts_a_cycle_with_the_policy_its_labels_match_now() {
        let h = history(&[
            (0, Inbound),
            (5, Response),
            (6, Status(ThreadStatus::Resolved)),
            (1440, Inbound),
            (1441, Response),
        ]);
        let later = at(100);
        let r =
            replay_sla(&h, &[policy(1, &["vip"], T0), policy(2, &[], T0), policy(3, &[], later)], &WallClock, at(1450));
        assert_eq!(r.outcomes, [(at(6), true)], "the second cycle still runs");
        let sla = r.sla.expect("sla");
        assert_eq!((sla.policy_id, sla.cycle_started_at, sla.responded), (Some(1), at(1440), true));
        assert_eq!(sla.next_check_at(), Some(at(1440 + 120)), "the live timer takes over at the resolution's due time");
    }

    #[test]
    fn a_policy_created_later_does_not_apply_and_pending_stops_the_clock() {
        let h = history(&[(0, Inbound)]);
        assert_eq!(replay_sla(&h, &[policy(1, &[], at(1))], &WallClock, at(600)).sla, None);
        let h = history(&[(0, Inbound), (3, Response), (4, Status(ThreadStatus::Pending))]);
        let r = replay_sla(&h, &[policy(1, &[], T0)], &WallClock, at(6000));
        assert!(r.outcomes.is_empty());
        let sla = r.sla.expect("sla");
        assert_eq!((sla.stopped_since, sla.next_check_at()), (Some(at(4)), None));
    }
}
