//! A thread's SLA through its cycle, decided by pure functions over what the storage adapter read
//! inside the transaction of the change (docs/product/sla.md):
//!
//! - A cycle starts with the thread's first inbound message, or the first one while it is
//!   `resolved`, at that message's time ([`start_cycle`]): the first policy by id that matches
//!   the thread applies, its due times counted from there.
//! - *First response*: the first outbound message by a member or an AI agent (API-key sends are
//!   automations and never count). *Next response*: once the first response is given, a contact's
//!   message with no answer pending sets `next_response_due_at` to its time plus the target; the
//!   next response clears it. Later messages of the same run keep the due time. *Resolution*: the
//!   thread becoming `resolved`, which ends the cycle.
//! - While the thread is `snoozed` or `pending` the clock stops: when it runs again every due time
//!   still running moves by the stopped time (counted in business hours for such a policy).
//! - A target whose due time comes first is missed: it joins `breaches` and emits
//!   `sla.breached` once; a missed next response is not measured again in the cycle.

use time::OffsetDateTime;

use super::clock::{Hours, WallClock};
use super::policy::{policy_for, SlaPolicy, SlaTarget, SlaTargets};
use crate::messaging::Sender;
use crate::threads::ThreadRecord;
use crate::threads::ThreadStatus;
use crate::webhooks::DomainEvent;

/// Where an SLA stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlaStatus {
    /// Some target still runs and none was missed.
    Active,
    /// Every target of the policy was met.
    Hit,
    /// A target was missed.
    Missed,
}

impl SlaStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            SlaStatus::Active => "active",
            SlaStatus::Hit => "hit",
            SlaStatus::Missed => "missed",
        }
    }
}

/// A thread's SLA in its current cycle, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSla {
    /// The policy that applied at the cycle's start (`None` once deleted: its targets still run).
    pub policy_id: Option<i64>,
    /// The policy's targets at the cycle's start.
    pub targets: SlaTargets,
    /// Whether only business hours count.
    pub business_hours: bool,
    /// The cycle's start.
    pub cycle_started_at: OffsetDateTime,
    /// When the first response is due.
    pub first_response_due_at: Option<OffsetDateTime>,
    /// When the awaited next response is due; `None` when no answer is awaited.
    pub next_response_due_at: Option<OffsetDateTime>,
    /// When the resolution is due.
    pub resolution_due_at: Option<OffsetDateTime>,
    /// The first response was given.
    pub responded: bool,
    /// The thread was resolved: the cycle is over.
    pub resolved: bool,
    /// Since when the clock is stopped (the thread is `snoozed` or `pending`).
    pub stopped_since: Option<OffsetDateTime>,
    /// The targets missed so far, in the order they were missed.
    pub breaches: Vec<SlaTarget>,
}

impl ThreadSla {
    /// `active`, `hit` or `missed` (`docs/contract.md`: missed once any target is missed, hit once
    /// every target of the policy is met). The end of the cycle meets every target not missed.
    pub fn status(&self) -> SlaStatus {
        if !self.breaches.is_empty() {
            return SlaStatus::Missed;
        }
        let met = |t: SlaTarget| {
            self.targets.of(t).is_none() || self.resolved || (t == SlaTarget::FirstResponse && self.responded)
        };
        if SlaTarget::ALL.into_iter().all(met) {
            SlaStatus::Hit
        } else {
            SlaStatus::Active
        }
    }

    /// Whether `target` was missed.
    pub fn missed(&self, target: SlaTarget) -> bool {
        self.breaches.contains(&target)
    }

    /// The due time of `target` while it still runs (not met, not missed, cycle not over).
    pub fn running(&self, target: SlaTarget) -> Option<OffsetDateTime> {
        if self.resolved || self.missed(target) {
            return None;
        }
        match target {
            SlaTarget::FirstResponse if !self.responded => self.first_response_due_at,
            SlaTarget::FirstResponse => None,
            SlaTarget::NextResponse => self.next_response_due_at,
            SlaTarget::Resolution => self.resolution_due_at,
        }
    }

    /// When the breach timer must look at the thread next: the earliest running due time, none
    /// while the clock is stopped.
    pub fn next_check_at(&self) -> Option<OffsetDateTime> {
        if self.stopped_since.is_some() {
            return None;
        }
        SlaTarget::ALL.into_iter().filter_map(|t| self.running(t)).min()
    }

    /// The clock of this SLA: `business` when it counts business hours, else every second.
    fn clock<'a>(&self, business: &'a dyn Hours) -> &'a dyn Hours {
        if self.business_hours {
            business
        } else {
            &WallClock
        }
    }

    /// Brings the SLA to `now`: a stopped clock moves the running due times by the time stopped
    /// so far (and stays stopped from `now`); a running clock misses every target due by `now`.
    /// Returns the targets missed now.
    fn settle(&mut self, business: &dyn Hours, now: OffsetDateTime) -> Vec<SlaTarget> {
        let clock = self.clock(business);
        if let Some(since) = self.stopped_since {
            if now > since {
                let shift = |due: Option<OffsetDateTime>| due.map(|d| clock.shift(d, since, now));
                if self.running(SlaTarget::FirstResponse).is_some() {
                    self.first_response_due_at = shift(self.first_response_due_at);
                }
                if self.running(SlaTarget::NextResponse).is_some() {
                    self.next_response_due_at = shift(self.next_response_due_at);
                }
                if self.running(SlaTarget::Resolution).is_some() {
                    self.resolution_due_at = shift(self.resolution_due_at);
                }
                self.stopped_since = Some(now);
            }
            return Vec::new();
        }
        let missed: Vec<SlaTarget> =
            SlaTarget::ALL.into_iter().filter(|t| self.running(*t).is_some_and(|due| due <= now)).collect();
        self.breaches.extend(&missed);
        missed
    }
}

/// What the SLA of a thread becomes, and the breaches to announce (one `sla.breached` each, with
/// the thread as it is after the change).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlaDecision {
    /// The SLA to store; `None`: the thread has none (no policy matched at its cycle's start).
    pub sla: Option<ThreadSla>,
    /// The targets missed by this decision.
    pub breached: Vec<SlaTarget>,
}

/// One target of a thread that a decision found missed: one `sla.breached` to announce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlaBreach {
    /// The thread.
    pub thread_id: i64,
    /// The missed target.
    pub target: SlaTarget,
}

impl SlaBreach {
    /// `sla.breached`, with the thread as it is once the change is written (its `sla` lists the
    /// breaches).
    pub fn event(&self, thread: ThreadRecord) -> DomainEvent {
        DomainEvent::SlaBreached(thread)
    }
}

impl SlaDecision {
    /// The breaches `thread_id`'s decision announces: one per target it found missed, in the
    /// order of [`SlaTarget::ALL`].
    pub fn breaches(&self, thread_id: i64) -> Vec<SlaBreach> {
        self.breached.iter().map(|&target| SlaBreach { thread_id, target }).collect()
    }

    /// Whether anything differs from `before` (nothing to write otherwise).
    pub fn changes(&self, before: Option<&ThreadSla>) -> bool {
        self.sla.as_ref() != before
    }

    /// The outcome this decision settles for the conversation reports' `sla` figure: `Some(true)`
    /// (hit) or `Some(false)` (missed) when the cycle's SLA leaves `active` with it, which happens
    /// once per cycle; `None` otherwise.
    pub fn settled(&self, before: Option<&ThreadSla>) -> Option<bool> {
        let after = self.sla.as_ref()?;
        let was = before
            .filter(|b| b.cycle_started_at == after.cycle_started_at)
            .map_or(SlaStatus::Active, ThreadSla::status);
        match (was, after.status()) {
            (SlaStatus::Active, SlaStatus::Hit) => Some(true),
            (SlaStatus::Active, SlaStatus::Missed) => Some(false),
            _ => None,
        }
    }

    fn of(sla: Option<ThreadSla>, breached: Vec<SlaTarget>) -> Self {
        Self { sla, breached }
    }
}

/// Whether an outbound message by `sender` is a response: a member's or an AI agent's. A send by
/// an API key on its own behalf is an automation (a notification, a template), never a response.
pub fn counts_as_response(sender: Sender) -> bool {
    matches!(sender, Sender::User(_) | Sender::AiAgent(_))
}

/// Whether the clock stands still in `status`.
pub fn stops_clock(status: ThreadStatus) -> bool {
    matches!(status, ThreadStatus::Snoozed | ThreadStatus::Pending)
}

/// A thread as a policy sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlaThreadFacts {
    /// Its channel.
    pub channel_id: i64,
    /// Its labels' names.
    pub labels: Vec<String>,
}

/// Whether an inbound message starts a cycle: the thread's first inbound message
/// (`had_inbound` false, a new thread included) or one while it is `resolved`.
pub fn starts_cycle(status_before: ThreadStatus, had_inbound: bool) -> bool {
    !had_inbound || status_before == ThreadStatus::Resolved
}

/// A cycle starting at `at` (the message's platform time), decided at `now`: the first matching
/// policy by id applies, with due times counted from `at`; a due time already past is missed at
/// once. `business` counts the workspace's business hours (all hours when none are set).
pub fn start_cycle(
    policies: &[SlaPolicy],
    thread: &SlaThreadFacts,
    at: OffsetDateTime,
    business: &dyn Hours,
    now: OffsetDateTime,
) -> SlaDecision {
    let Some(policy) = policy_for(policies, thread.channel_id, &thread.labels) else {
        return SlaDecision::of(None, Vec::new());
    };
    let clock: &dyn Hours = if policy.business_hours { business } else { &WallClock };
    let due = |t: SlaTarget| policy.targets.of(t).map(|s| clock.add(at, s));
    let mut sla = ThreadSla {
        policy_id: Some(policy.id),
        targets: policy.targets,
        business_hours: policy.business_hours,
        cycle_started_at: at,
        first_response_due_at: due(SlaTarget::FirstResponse),
        next_response_due_at: None,
        resolution_due_at: due(SlaTarget::Resolution),
        responded: false,
        resolved: false,
        stopped_since: None,
        breaches: Vec::new(),
    };
    let breached = sla.settle(business, now);
    SlaDecision::of(Some(sla), breached)
}

/// What the storage read for an inbound message.
#[derive(Debug, Clone)]
pub struct InboundSlaFacts<'a> {
    /// The thread's status before the message; `None` for a thread the message creates.
    pub status_before: Option<ThreadStatus>,
    /// Whether the thread had an inbound message before this one.
    pub had_inbound: bool,
    /// The message's platform time.
    pub at: OffsetDateTime,
    /// The thread (read when a cycle starts).
    pub thread: SlaThreadFacts,
    /// The workspace's policies (read when a cycle starts).
    pub policies: &'a [SlaPolicy],
}

/// An inbound message: a cycle starts ([`starts_cycle`], [`start_cycle`]), or the running SLA
/// hears of the contact's message after the reopening it caused (a `pending` or `snoozed`
/// thread opens: the clock runs again).
pub fn decide_inbound(
    current: Option<&ThreadSla>,
    facts: &InboundSlaFacts<'_>,
    business: &dyn Hours,
    now: OffsetDateTime,
) -> SlaDecision {
    let before = facts.status_before.unwrap_or(ThreadStatus::Open);
    if facts.status_before.is_none() || starts_cycle(before, facts.had_inbound) {
        return start_cycle(facts.policies, &facts.thread, facts.at, business, now);
    }
    let Some(current) = current else { return SlaDecision::of(None, Vec::new()) };
    let mut breached = Vec::new();
    let mut sla = current.clone();
    if before != ThreadStatus::Open {
        let reopened = decide_sla(&sla, SlaFact::StatusChanged { from: before, to: ThreadStatus::Open }, business, now);
        breached.extend(reopened.breached);
        sla = reopened.sla.unwrap_or(sla);
    }
    let heard = decide_sla(&sla, SlaFact::ContactMessage { at: facts.at }, business, now);
    breached.extend(heard.breached);
    SlaDecision::of(heard.sla, breached)
}

/// What happened to a thread that has an SLA (a cycle's start is [`start_cycle`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlaFact {
    /// The contact wrote, at the message's time (after any status change it caused).
    ContactMessage {
        /// The message's platform time.
        at: OffsetDateTime,
    },
    /// A member or AI agent answered.
    Response,
    /// The status changed.
    StatusChanged {
        /// Before.
        from: ThreadStatus,
        /// After.
        to: ThreadStatus,
    },
    /// The breach timer looked.
    Tick,
}

/// What `fact` at `now` does to `current`.
pub fn decide_sla(current: &ThreadSla, fact: SlaFact, business: &dyn Hours, now: OffsetDateTime) -> SlaDecision {
    let mut sla = current.clone();
    let breached = sla.settle(business, now);
    match fact {
        SlaFact::Tick => {}
        SlaFact::Response => {
            if !sla.resolved {
                sla.responded = true;
                sla.next_response_due_at = None;
            }
        }
        SlaFact::ContactMessage { at } => {
            let awaits = sla.responded && !sla.resolved && sla.next_response_due_at.is_none();
            if let (true, false, Some(seconds)) =
                (awaits, sla.missed(SlaTarget::NextResponse), sla.targets.next_response)
            {
                let due = sla.clock(business).add(at, seconds);
                sla.next_response_due_at = Some(due);
                // A message whose platform time is long past may already be late.
                if sla.stopped_since.is_none() && due <= now {
                    sla.breaches.push(SlaTarget::NextResponse);
                    let mut breached = breached;
                    breached.push(SlaTarget::NextResponse);
                    return SlaDecision::of(Some(sla), breached);
                }
            }
        }
        SlaFact::StatusChanged { from, to } => {
            if to == ThreadStatus::Resolved {
                sla.resolved = true;
                sla.next_response_due_at = None;
                sla.stopped_since = None;
            } else if stops_clock(to) && !stops_clock(from) && !sla.resolved {
                sla.stopped_since = Some(now);
            } else if !stops_clock(to) {
                sla.stopped_since = None;
            }
        }
    }
    SlaDecision::of(Some(sla), breached)
}

#[cfg(test)]
#[path = "tracking_tests.rs"]
mod tests;
