use time::macros::datetime;
use time::Duration;

use super::*;

const T0: OffsetDateTime = datetime!(2026-11-26 10:00:00 UTC);

/// Business hours in the tests: one counted second every two (checks which clock is used).
struct HalfTime;

impl Hours for HalfTime {
    fn add(&self, from: OffsetDateTime, seconds: i64) -> OffsetDateTime {
        from + Duration::seconds(seconds * 2)
    }
    fn between(&self, from: OffsetDateTime, to: OffsetDateTime) -> i64 {
        ((to - from).whole_seconds() / 2).max(0)
    }
}

fn policy(id: i64, targets: SlaTargets, business_hours: bool) -> SlaPolicy {
    SlaPolicy {
        id,
        name: "p".into(),
        targets,
        business_hours,
        channel_ids: Vec::new(),
        labels: Vec::new(),
        created_at: T0,
    }
}

fn targets(first: Option<i64>, next: Option<i64>, resolution: Option<i64>) -> SlaTargets {
    SlaTargets { first_response: first, next_response: next, resolution }
}

fn facts() -> SlaThreadFacts {
    SlaThreadFacts { channel_id: 1, labels: Vec::new() }
}

fn started(t: SlaTargets, business: bool) -> ThreadSla {
    start_cycle(&[policy(1, t, business)], &facts(), T0, &HalfTime, T0).sla.expect("a policy applies")
}

fn secs(n: i64) -> Duration {
    Duration::seconds(n)
}

fn at(sla: &ThreadSla, fact: SlaFact, now: OffsetDateTime) -> SlaDecision {
    decide_sla(sla, fact, &HalfTime, now)
}

#[test]
fn a_cycle_counts_from_the_message_in_the_policys_clock() {
    let wall = started(targets(Some(60), Some(30), Some(3600)), false);
    assert_eq!(wall.first_response_due_at, Some(T0 + secs(60)));
    assert_eq!(wall.resolution_due_at, Some(T0 + secs(3600)));
    assert_eq!(wall.next_response_due_at, None);
    assert_eq!((wall.status(), wall.next_check_at()), (SlaStatus::Active, Some(T0 + secs(60))));
    let business = started(targets(Some(60), None, None), true);
    assert_eq!(business.first_response_due_at, Some(T0 + secs(120)));
    assert_eq!(business.resolution_due_at, None);
}

#[test]
fn no_matching_policy_means_no_sla_and_a_late_message_misses_at_once() {
    let mut p = policy(1, targets(Some(60), None, None), false);
    p.channel_ids = vec![2];
    assert_eq!(start_cycle(&[p], &facts(), T0, &WallClock, T0).sla, None);
    let late = start_cycle(&[policy(1, targets(Some(60), None, None), false)], &facts(), T0, &WallClock, T0 + secs(61));
    assert_eq!(late.breached, [SlaTarget::FirstResponse]);
    assert_eq!(late.sla.map(|s| s.status()), Some(SlaStatus::Missed));
}

#[test]
fn a_first_response_in_time_is_a_hit_when_it_is_the_only_target() {
    let sla = started(targets(Some(60), None, None), false);
    let d = at(&sla, SlaFact::Response, T0 + secs(59));
    assert!(d.breached.is_empty());
    let after = d.sla.expect("sla");
    assert_eq!((after.status(), after.next_check_at()), (SlaStatus::Hit, None));
}

#[test]
fn the_timer_misses_a_due_target_once() {
    let sla = started(targets(Some(60), None, Some(120)), false);
    assert_eq!(at(&sla, SlaFact::Tick, T0 + secs(59)).breached, []);
    let d = at(&sla, SlaFact::Tick, T0 + secs(60));
    assert_eq!(d.breached, [SlaTarget::FirstResponse]);
    let missed = d.sla.expect("sla");
    assert_eq!(missed.status(), SlaStatus::Missed);
    assert_eq!(missed.next_check_at(), Some(T0 + secs(120)), "the resolution still runs");
    let again = at(&missed, SlaFact::Tick, T0 + secs(61));
    assert!(again.breached.is_empty() && !again.changes(Some(&missed)), "once per breach");
    let late_reply = at(&missed, SlaFact::Response, T0 + secs(70)).sla.expect("sla");
    assert_eq!(late_reply.breaches, [SlaTarget::FirstResponse]);
    let both = at(&late_reply, SlaFact::Tick, T0 + secs(500));
    assert_eq!(both.breached, [SlaTarget::Resolution]);
    assert_eq!(both.sla.expect("sla").breaches, [SlaTarget::FirstResponse, SlaTarget::Resolution]);
}

#[test]
fn a_late_response_misses_even_before_the_timer_looked() {
    let sla = started(targets(Some(60), None, None), false);
    let d = at(&sla, SlaFact::Response, T0 + secs(61));
    assert_eq!(d.breached, [SlaTarget::FirstResponse]);
}

#[test]
fn a_next_response_is_due_after_a_contacts_message_that_follows_a_response() {
    let sla = started(targets(None, Some(30), None), false);
    // Before the first response, the contact's messages await the first response, not a next one.
    let waiting = at(&sla, SlaFact::ContactMessage { at: T0 + secs(5) }, T0 + secs(5)).sla.expect("sla");
    assert_eq!(waiting.next_response_due_at, None);
    let replied = at(&waiting, SlaFact::Response, T0 + secs(10)).sla.expect("sla");
    assert_eq!(replied.status(), SlaStatus::Active, "more rounds may come until the cycle ends");
    let asked = at(&replied, SlaFact::ContactMessage { at: T0 + secs(20) }, T0 + secs(21)).sla.expect("sla");
    assert_eq!(asked.next_response_due_at, Some(T0 + secs(50)));
    let again = at(&asked, SlaFact::ContactMessage { at: T0 + secs(40) }, T0 + secs(40)).sla.expect("sla");
    assert_eq!(again.next_response_due_at, Some(T0 + secs(50)), "the run's first message counts");
    let answered = at(&again, SlaFact::Response, T0 + secs(45)).sla.expect("sla");
    assert_eq!((answered.next_response_due_at, answered.next_check_at()), (None, None));
    let asked = at(&answered, SlaFact::ContactMessage { at: T0 + secs(60) }, T0 + secs(60)).sla.expect("sla");
    let d = at(&asked, SlaFact::Tick, T0 + secs(90));
    assert_eq!(d.breached, [SlaTarget::NextResponse]);
    let missed = d.sla.expect("sla");
    let answered = at(&missed, SlaFact::Response, T0 + secs(95)).sla.expect("sla");
    let asked = at(&answered, SlaFact::ContactMessage { at: T0 + secs(100) }, T0 + secs(100)).sla.expect("sla");
    assert_eq!(asked.next_check_at(), None, "a missed next response is not measured again");
}

#[test]
fn a_contact_message_dated_long_ago_misses_its_next_response_at_once() {
    let sla = at(&started(targets(None, Some(30), None), false), SlaFact::Response, T0).sla.expect("sla");
    let d = at(&sla, SlaFact::ContactMessage { at: T0 + secs(1) }, T0 + secs(100));
    assert_eq!(d.breached, [SlaTarget::NextResponse]);
}

#[test]
fn the_clock_stops_while_snoozed_or_pending_and_due_times_move_by_the_stopped_time() {
    use ThreadStatus::{Open, Pending, Resolved, Snoozed};
    let sla = started(targets(Some(60), None, Some(600)), false);
    let stopped = at(&sla, SlaFact::StatusChanged { from: Open, to: Snoozed }, T0 + secs(10)).sla.expect("sla");
    assert_eq!(stopped.next_check_at(), None, "no timer while stopped");
    assert!(at(&stopped, SlaFact::Tick, T0 + secs(100)).breached.is_empty());
    let still = at(&stopped, SlaFact::StatusChanged { from: Snoozed, to: Pending }, T0 + secs(40)).sla.expect("sla");
    let running = at(&still, SlaFact::StatusChanged { from: Pending, to: Open }, T0 + secs(100)).sla.expect("sla");
    assert_eq!(running.first_response_due_at, Some(T0 + secs(150)));
    assert_eq!(running.resolution_due_at, Some(T0 + secs(690)));
    assert_eq!(running.next_check_at(), Some(T0 + secs(150)));
    // Resolving while stopped: the stopped time does not count against the resolution.
    let stopped = at(&running, SlaFact::StatusChanged { from: Open, to: Pending }, T0 + secs(120)).sla.expect("sla");
    let done = at(&stopped, SlaFact::StatusChanged { from: Pending, to: Resolved }, T0 + secs(2000));
    assert!(done.breached.is_empty());
    let done = done.sla.expect("sla");
    assert_eq!(done.status(), SlaStatus::Hit, "resolution ends the cycle; the unanswered first response is moot");
    assert_eq!(done.next_check_at(), None);
}

#[test]
fn stopped_time_counts_in_business_hours_for_such_a_policy() {
    use ThreadStatus::{Open, Snoozed};
    let sla = started(targets(Some(60), None, None), true);
    assert_eq!(sla.first_response_due_at, Some(T0 + secs(120)));
    let stopped = at(&sla, SlaFact::StatusChanged { from: Open, to: Snoozed }, T0 + secs(10)).sla.expect("sla");
    let running = at(&stopped, SlaFact::StatusChanged { from: Snoozed, to: Open }, T0 + secs(110)).sla.expect("sla");
    // 100 s stopped are 50 counted seconds, which take 100 s again.
    assert_eq!(running.first_response_due_at, Some(T0 + secs(220)));
}

#[test]
fn resolving_in_time_meets_the_resolution_and_late_misses_it() {
    use ThreadStatus::{Open, Resolved};
    let sla = started(targets(None, None, Some(600)), false);
    let hit = at(&sla, SlaFact::StatusChanged { from: Open, to: Resolved }, T0 + secs(600)).sla.expect("sla");
    assert_eq!(hit.status(), SlaStatus::Missed, "due at 600 s: resolving then is late");
    let hit = at(&sla, SlaFact::StatusChanged { from: Open, to: Resolved }, T0 + secs(599)).sla.expect("sla");
    assert_eq!(hit.status(), SlaStatus::Hit);
    let reopened = at(&hit, SlaFact::StatusChanged { from: Resolved, to: Open }, T0 + secs(700)).sla.expect("sla");
    assert_eq!(reopened.status(), SlaStatus::Hit, "only a contact's message starts a new cycle");
    assert!(starts_cycle(Resolved, true) && starts_cycle(Open, false) && !starts_cycle(Open, true));
    assert!(!starts_cycle(ThreadStatus::Snoozed, true));
}

#[test]
fn an_inbound_message_starts_a_cycle_or_reopens_and_is_heard() {
    use ThreadStatus::{Open, Resolved, Snoozed};
    let policies = [policy(4, targets(Some(60), Some(30), None), false)];
    let facts = |status_before, had_inbound, at| InboundSlaFacts {
        status_before,
        had_inbound,
        at,
        thread: facts(),
        policies: &policies,
    };
    let new = decide_inbound(None, &facts(None, false, T0), &WallClock, T0).sla.expect("a new cycle");
    assert_eq!((new.policy_id, new.first_response_due_at), (Some(4), Some(T0 + secs(60))));
    // A thread opened by an outbound template: its first inbound message starts the cycle.
    assert!(decide_inbound(None, &facts(Some(Open), false, T0), &WallClock, T0).sla.is_some());
    assert_eq!(decide_inbound(None, &facts(Some(Open), true, T0), &WallClock, T0).sla, None, "no cycle, no SLA");
    let replied = at(&new, SlaFact::Response, T0 + secs(10)).sla.expect("sla");
    let snoozed = at(&replied, SlaFact::StatusChanged { from: Open, to: Snoozed }, T0 + secs(20)).sla.expect("sla");
    let heard = decide_inbound(Some(&snoozed), &facts(Some(Snoozed), true, T0 + secs(50)), &WallClock, T0 + secs(50));
    let heard = heard.sla.expect("sla");
    assert_eq!((heard.stopped_since, heard.next_response_due_at), (None, Some(T0 + secs(80))));
    let resolved = at(&heard, SlaFact::StatusChanged { from: Open, to: Resolved }, T0 + secs(60)).sla.expect("sla");
    let again = decide_inbound(Some(&resolved), &facts(Some(Resolved), true, T0 + secs(90)), &WallClock, T0 + secs(90));
    let again = again.sla.expect("a new cycle");
    assert_eq!((again.cycle_started_at, again.responded, again.breaches.len()), (T0 + secs(90), false, 0));
}

#[test]
fn a_cycle_settles_its_report_outcome_once_hit_or_missed() {
    let sla = started(targets(Some(60), None, Some(120)), false);
    let in_time = at(&sla, SlaFact::Tick, T0 + secs(59));
    assert_eq!(in_time.settled(Some(&sla)), None, "still active");
    let missed = at(&sla, SlaFact::Tick, T0 + secs(60));
    assert_eq!(missed.settled(Some(&sla)), Some(false));
    let after = missed.sla.clone().expect("sla");
    let both = at(&after, SlaFact::Tick, T0 + secs(500));
    assert_eq!(both.settled(Some(&after)), None, "a second breach settles nothing more");
    let only_first = started(targets(Some(60), None, None), false);
    let hit = at(&only_first, SlaFact::Response, T0 + secs(10));
    assert_eq!(hit.settled(Some(&only_first)), Some(true));
    assert_eq!(hit.settled(None), Some(true), "a cycle settled as it starts");
}

#[test]
fn each_missed_target_is_one_breach_of_the_thread_to_announce() {
    let late =
        start_cycle(&[policy(1, targets(Some(60), None, Some(120)), false)], &facts(), T0, &WallClock, T0 + secs(121));
    assert_eq!(
        late.breaches(7),
        [
            SlaBreach { thread_id: 7, target: SlaTarget::FirstResponse },
            SlaBreach { thread_id: 7, target: SlaTarget::Resolution }
        ]
    );
    let quiet = start_cycle(&[policy(1, targets(Some(60), None, None), false)], &facts(), T0, &WallClock, T0);
    assert!(quiet.breaches(7).is_empty());
}
