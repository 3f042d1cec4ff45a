//! A thread's status and how it moves: a member's change, a contact's reply, a snooze coming to
//! its end. Each rule is a pure decision over the thread's current status; the storage adapter
//! loads the status inside its transaction (row locked), asks, and writes what comes back with
//! one `thread.status_changed` (docs/product/snooze.md).

use time::{Duration, OffsetDateTime};

use super::model::Assignee;
use super::record::ThreadRecord;
use crate::common::error::{FieldError, ValidationErrors};
use crate::reports::ConversationEvent;
use crate::teams::AssignmentReason;
use crate::webhooks::DomainEvent;

/// The longest snooze with a time.
pub const MAX_SNOOZE: Duration = Duration::days(365);

/// A thread's status: the known set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThreadStatus {
    /// Someone should act.
    Open,
    /// Waiting on someone other than the contact.
    Pending,
    /// Out of sight until a time, or until the contact writes.
    Snoozed,
    /// Done.
    Resolved,
}

impl ThreadStatus {
    /// Every status, in the order the docs list them.
    pub const ALL: [ThreadStatus; 4] =
        [ThreadStatus::Open, ThreadStatus::Pending, ThreadStatus::Snoozed, ThreadStatus::Resolved];

    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ThreadStatus::Open => "open",
            ThreadStatus::Pending => "pending",
            ThreadStatus::Snoozed => "snoozed",
            ThreadStatus::Resolved => "resolved",
        }
    }

    /// The status named `raw`.
    ///
    /// # Errors
    /// A [`FieldError`] on `field` for any other name.
    pub fn parse(field: &str, raw: &str) -> Result<Self, FieldError> {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str() == raw)
            .ok_or_else(|| FieldError::new(field, "must be one of open, pending, snoozed, resolved"))
    }

    /// A stored status (the column only holds the four; anything else reads as `open`).
    pub fn stored(raw: &str) -> Self {
        Self::parse("status", raw).unwrap_or(ThreadStatus::Open)
    }

    /// Whether the thread counts toward its member's load (capacity).
    pub fn counts_as_load(self) -> bool {
        matches!(self, ThreadStatus::Open | ThreadStatus::Pending)
    }
}

/// Why the status last changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatusReason {
    /// A member or integration changed it.
    Manual,
    /// The contact wrote while it was pending, snoozed or resolved.
    ContactReplied,
    /// Its snooze came to its time.
    SnoozeExpired,
}

impl StatusReason {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            StatusReason::Manual => "manual",
            StatusReason::ContactReplied => "contact_replied",
            StatusReason::SnoozeExpired => "snooze_expired",
        }
    }

    /// A stored reason (`None` for anything unknown).
    pub fn stored(raw: &str) -> Option<Self> {
        match raw {
            "manual" => Some(StatusReason::Manual),
            "contact_replied" => Some(StatusReason::ContactReplied),
            "snooze_expired" => Some(StatusReason::SnoozeExpired),
            _ => None,
        }
    }
}

/// A status a request asks for, validated: `snoozed_until` only with `snoozed`, in the future
/// and at most [`MAX_SNOOZE`] ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusRequest {
    /// The status.
    pub status: ThreadStatus,
    /// The snooze's end; `None` with `snoozed` lasts until the contact writes.
    pub snoozed_until: Option<OffsetDateTime>,
}

impl StatusRequest {
    /// Validates a request's `status` and `snoozed_until` (RFC 3339) at `now`.
    ///
    /// # Errors
    /// [`ValidationErrors`] naming `status` or `snoozed_until`.
    pub fn new(status: &str, snoozed_until: Option<&str>, now: OffsetDateTime) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let status = errors.check(ThreadStatus::parse("status", status));
        let until = snoozed_until.and_then(|raw| {
            errors.check(
                crate::common::instant::parse_rfc3339(raw)
                    .map(to_stored_precision)
                    .ok_or_else(|| FieldError::new("snoozed_until", crate::common::instant::EXPECTED)),
            )
        });
        if let (Some(status), Some(until)) = (status, until) {
            if status != ThreadStatus::Snoozed {
                errors.0.push(FieldError::new("snoozed_until", "is only taken with the status `snoozed`"));
            } else if until <= now {
                errors.0.push(FieldError::new("snoozed_until", "must be in the future"));
            } else if until > now + MAX_SNOOZE {
                errors.0.push(FieldError::new("snoozed_until", "must be at most 365 days ahead"));
            }
        }
        errors.clone().into_result()?;
        match status {
            Some(status) => Ok(Self { status, snoozed_until: until }),
            None => Err(errors),
        }
    }
}

/// `at` in UTC to the microsecond, as PostgreSQL keeps it: the same time given again is the same
/// snooze, and the record shows what was asked.
fn to_stored_precision(at: OffsetDateTime) -> OffsetDateTime {
    at.replace_nanosecond(at.nanosecond() / 1000 * 1000).unwrap_or(at)
}

/// A thread's status as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusFacts {
    /// The status.
    pub status: ThreadStatus,
    /// The snooze's end, when snoozed with a time.
    pub snoozed_until: Option<OffsetDateTime>,
}

/// What to write: the new status, the snooze's end (cleared unless snoozed with a time) and why.
/// It emits `thread.status_changed` once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusChange {
    /// The new status.
    pub status: ThreadStatus,
    /// The new snooze end.
    pub snoozed_until: Option<OffsetDateTime>,
    /// Why.
    pub reason: StatusReason,
}

impl StatusChange {
    /// The event the change emits, with the thread's record once changed.
    pub fn event(&self, thread: ThreadRecord) -> DomainEvent {
        DomainEvent::ThreadStatusChanged(thread)
    }

    /// What the change adds to the conversation reports when made at `at`: a resolution closes
    /// the thread's cycle; any other status adds nothing.
    pub fn report(&self, at: OffsetDateTime) -> Option<ConversationEvent> {
        (self.status == ThreadStatus::Resolved).then_some(ConversationEvent::Resolved { at })
    }
}

/// A member's or integration's change: `None` when it asks for what is already there (nothing
/// written, no event). Snoozing again with another time is a change.
pub fn decide_status(current: StatusFacts, wanted: StatusRequest) -> Option<StatusChange> {
    if current.status == wanted.status && current.snoozed_until == wanted.snoozed_until {
        return None;
    }
    Some(StatusChange { status: wanted.status, snoozed_until: wanted.snoozed_until, reason: StatusReason::Manual })
}

/// A contact's message: a pending, snoozed or resolved thread opens.
pub fn decide_contact_reply(current: StatusFacts) -> Option<StatusChange> {
    (current.status != ThreadStatus::Open).then_some(StatusChange {
        status: ThreadStatus::Open,
        snoozed_until: None,
        reason: StatusReason::ContactReplied,
    })
}

/// The snooze timer at `now`: a thread snoozed until a time that has come opens. Anything else
/// (already reopened, snoozed again for later, snoozed until the contact writes) stays.
pub fn decide_snooze_expiry(current: StatusFacts, now: OffsetDateTime) -> Option<StatusChange> {
    match (current.status, current.snoozed_until) {
        (ThreadStatus::Snoozed, Some(until)) if until <= now => {
            Some(StatusChange { status: ThreadStatus::Open, snoozed_until: None, reason: StatusReason::SnoozeExpired })
        }
        _ => None,
    }
}

/// What a chosen assignee writes: the assignee, `assignment_reason` `manual`, the thread leaves its
/// team's queue, and a team assignee becomes the thread's team. It emits `thread.assigned` once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ManualAssignment {
    /// The new assignee (none: unassigned).
    pub assignee: Option<Assignee>,
    /// The new `team_id` when it changes.
    pub team_id: Option<i64>,
    /// Always `manual`.
    pub reason: AssignmentReason,
}

impl ManualAssignment {
    /// The event it emits, with the thread's record once assigned.
    pub fn event(&self, thread: ThreadRecord) -> DomainEvent {
        DomainEvent::ThreadAssigned(thread)
    }
}

/// A member's or integration's choice of assignee: `None` when it is the current one.
pub fn decide_manual_assignment(current: Option<Assignee>, wanted: Option<Assignee>) -> Option<ManualAssignment> {
    if current == wanted {
        return None;
    }
    let team_id = match wanted {
        Some(Assignee::Team(t)) => Some(t),
        _ => None,
    };
    Some(ManualAssignment { assignee: wanted, team_id, reason: AssignmentReason::Manual })
}

/// What the workspace knows of a wanted assignee, loaded by its kind and id: the facts
/// [`admit_assignee`] decides on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssigneeStanding {
    /// A member of the workspace, active or not.
    Member {
        /// Whether the membership is active.
        active: bool,
    },
    /// A team of the workspace.
    Team,
    /// An AI agent of the workspace.
    AiAgent {
        /// Whether the agent's status is `active`.
        active: bool,
    },
    /// Nothing of the workspace has that kind and id.
    Unknown,
}

impl AssigneeStanding {
    /// An AI agent whose stored status is `status` (only `active` agents take threads).
    pub fn agent(status: &str) -> Self {
        Self::AiAgent { active: status == "active" }
    }
}

/// Whether `assignee`, standing as `standing` in the workspace, may take threads: an active
/// member, a team, or an active AI agent; anything else is
/// [`super::UpdateThreadError::UnknownAssignee`] (the same answer whether it exists elsewhere, is
/// inactive or never was).
///
/// # Errors
/// [`super::UpdateThreadError::UnknownAssignee`].
pub fn admit_assignee(assignee: Assignee, standing: AssigneeStanding) -> Result<(), super::UpdateThreadError> {
    match standing {
        AssigneeStanding::Member { active: true }
        | AssigneeStanding::Team
        | AssigneeStanding::AiAgent { active: true } => Ok(()),
        AssigneeStanding::Member { active: false }
        | AssigneeStanding::AiAgent { active: false }
        | AssigneeStanding::Unknown => {
            Err(super::UpdateThreadError::UnknownAssignee { kind: assignee.kind(), id: assignee.id() })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhooks::samples::sample_thread;
    use crate::webhooks::EventType;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-11-26 12:00:00 UTC);

    fn facts(status: ThreadStatus, snoozed_until: Option<OffsetDateTime>) -> StatusFacts {
        StatusFacts { status, snoozed_until }
    }

    fn fields(e: ValidationErrors) -> Vec<String> {
        e.0.into_iter().map(|f| f.field).collect()
    }

    #[test]
    fn requests_name_the_bad_field() {
        let ok = StatusRequest::new("snoozed", Some("2026-11-27T12:00:00Z"), NOW).expect("valid");
        assert_eq!(ok.snoozed_until, Some(datetime!(2026-11-27 12:00:00 UTC)));
        assert_eq!(StatusRequest::new("snoozed", None, NOW).map(|r| r.snoozed_until), Ok(None));
        for (status, until, field) in [
            ("closed", None, "status"),
            ("Open", None, "status"),
            ("open", Some("2026-11-27T12:00:00Z"), "snoozed_until"),
            ("snoozed", Some("2026-11-26T11:59:59Z"), "snoozed_until"),
            ("snoozed", Some("2026-11-26T12:00:00Z"), "snoozed_until"),
            ("snoozed", Some("2027-11-26T12:00:01Z"), "snoozed_until"),
            ("snoozed", Some("tomorrow"), "snoozed_until"),
        ] {
            assert_eq!(
                fields(StatusRequest::new(status, until, NOW).expect_err(status)),
                [field],
                "{status} {until:?}"
            );
        }
        assert!(StatusRequest::new("snoozed", Some("2027-11-26T12:00:00Z"), NOW).is_ok(), "365 days is allowed");
        let r = StatusRequest::new("snoozed", Some("2026-11-27T14:00:00.123456789+02:00"), NOW).expect("valid");
        assert_eq!(r.snoozed_until, Some(datetime!(2026-11-27 12:00:00.123456 UTC)), "UTC, to the microsecond");
    }

    #[test]
    fn the_same_status_again_changes_nothing_and_another_snooze_time_does() {
        let snoozed = facts(ThreadStatus::Snoozed, Some(datetime!(2026-11-27 00:00 UTC)));
        let same = StatusRequest { status: ThreadStatus::Snoozed, snoozed_until: snoozed.snoozed_until };
        assert_eq!(decide_status(snoozed, same), None);
        let later =
            StatusRequest { status: ThreadStatus::Snoozed, snoozed_until: Some(datetime!(2026-11-28 00:00 UTC)) };
        let change = decide_status(snoozed, later).expect("a change");
        assert_eq!(
            (change.reason, change.event(sample_thread()).event_type()),
            (StatusReason::Manual, EventType::ThreadStatusChanged)
        );
    }

    #[test]
    fn every_manual_transition_is_a_change() {
        for from in ThreadStatus::ALL {
            for to in ThreadStatus::ALL.into_iter().filter(|s| *s != from) {
                let change = decide_status(facts(from, None), StatusRequest { status: to, snoozed_until: None })
                    .expect("a change");
                assert_eq!((change.status, change.snoozed_until, change.reason), (to, None, StatusReason::Manual));
            }
        }
    }

    #[test]
    fn only_a_resolution_is_reported() {
        for status in ThreadStatus::ALL {
            let change = StatusChange { status, snoozed_until: None, reason: StatusReason::Manual };
            let expected = (status == ThreadStatus::Resolved).then_some(ConversationEvent::Resolved { at: NOW });
            assert_eq!(change.report(NOW), expected, "{status:?}");
        }
    }

    #[test]
    fn a_reply_opens_every_status_but_open() {
        assert_eq!(decide_contact_reply(facts(ThreadStatus::Open, None)), None);
        for s in [ThreadStatus::Pending, ThreadStatus::Snoozed, ThreadStatus::Resolved] {
            let change = decide_contact_reply(facts(s, Some(NOW))).expect("reopens");
            assert_eq!((change.status, change.snoozed_until), (ThreadStatus::Open, None));
            assert_eq!(change.reason, StatusReason::ContactReplied);
        }
    }

    #[test]
    fn a_chosen_assignee_is_manual_and_a_team_becomes_the_threads_team() {
        assert_eq!(decide_manual_assignment(Some(Assignee::User(1)), Some(Assignee::User(1))), None);
        assert_eq!(decide_manual_assignment(None, None), None);
        let to_team = decide_manual_assignment(Some(Assignee::User(1)), Some(Assignee::Team(4))).expect("change");
        assert_eq!((to_team.team_id, to_team.reason), (Some(4), AssignmentReason::Manual));
        let to_user = decide_manual_assignment(Some(Assignee::Team(4)), Some(Assignee::User(2))).expect("change");
        assert_eq!((to_user.assignee, to_user.team_id), (Some(Assignee::User(2)), None));
        assert_eq!(
            decide_manual_assignment(Some(Assignee::User(2)), None).map(|a| a.event(sample_thread()).event_type()),
            Some(EventType::ThreadAssigned)
        );
    }

    #[test]
    fn only_a_due_timed_snooze_expires() {
        let due = facts(ThreadStatus::Snoozed, Some(NOW));
        assert_eq!(decide_snooze_expiry(due, NOW).map(|c| c.reason), Some(StatusReason::SnoozeExpired));
        assert_eq!(decide_snooze_expiry(facts(ThreadStatus::Snoozed, Some(NOW + Duration::SECOND)), NOW), None);
        assert_eq!(decide_snooze_expiry(facts(ThreadStatus::Snoozed, None), NOW), None);
        assert_eq!(decide_snooze_expiry(facts(ThreadStatus::Open, None), NOW), None);
    }

    #[test]
    fn only_active_members_teams_and_active_agents_take_threads() {
        assert!(admit_assignee(Assignee::User(1), AssigneeStanding::Member { active: true }).is_ok());
        assert!(admit_assignee(Assignee::Team(2), AssigneeStanding::Team).is_ok());
        assert!(admit_assignee(Assignee::AiAgent(3), AssigneeStanding::AiAgent { active: true }).is_ok());
        for (a, standing) in [
            (Assignee::User(1), AssigneeStanding::Member { active: false }),
            (Assignee::User(1), AssigneeStanding::Unknown),
            (Assignee::Team(2), AssigneeStanding::Unknown),
            (Assignee::AiAgent(3), AssigneeStanding::AiAgent { active: false }),
            (Assignee::AiAgent(3), AssigneeStanding::Unknown),
        ] {
            let refused = admit_assignee(a, standing);
            assert!(
                matches!(refused, Err(super::super::UpdateThreadError::UnknownAssignee { kind, id }) if kind == a.kind() && id == a.id()),
                "{a:?} {standing:?}"
            );
        }
    }
}
