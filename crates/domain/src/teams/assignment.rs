//! A team's assignment policy and the decisions it makes: where a new thread goes, and which
//! waiting threads go to which member (docs/product/assignment.md). The storage adapter locks the
//! team's row, loads the facts (members' availability, load and turn; the waiting threads, oldest
//! first), asks, and writes what comes back: the lock makes the count of each member's load exact
//! under any concurrency and any number of instances.

use time::{Duration, OffsetDateTime};

use crate::common::error::{FieldError, ValidationErrors};
use crate::members::Availability;
use crate::threads::ThreadRecord;
use crate::webhooks::DomainEvent;

/// How a team hands out its threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AssignmentMode {
    /// Threads stay with the team until someone assigns them.
    #[default]
    Manual,
    /// The team's online members in turn.
    RoundRobin,
    /// The online member with the fewest open and pending threads.
    Balanced,
}

impl AssignmentMode {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            AssignmentMode::Manual => "manual",
            AssignmentMode::RoundRobin => "round_robin",
            AssignmentMode::Balanced => "balanced",
        }
    }

    /// The mode named `raw`.
    ///
    /// # Errors
    /// A [`FieldError`] on `assignment.mode`.
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        match raw {
            "manual" => Ok(AssignmentMode::Manual),
            "round_robin" => Ok(AssignmentMode::RoundRobin),
            "balanced" => Ok(AssignmentMode::Balanced),
            _ => Err(FieldError::new("assignment.mode", "must be one of manual, round_robin, balanced")),
        }
    }

    /// Every mode.
    pub const ALL: [AssignmentMode; 3] = [AssignmentMode::Manual, AssignmentMode::RoundRobin, AssignmentMode::Balanced];

    /// Whether a team in this mode serves its queue itself: every mode but `manual`.
    pub fn serves_queue(self) -> bool {
        self != AssignmentMode::Manual
    }

    /// The modes that [`serves_queue`](Self::serves_queue), by stored name (the worker looks only
    /// at those teams' queues).
    pub fn serving() -> Vec<&'static str> {
        Self::ALL.into_iter().filter(|m| m.serves_queue()).map(AssignmentMode::as_str).collect()
    }

    /// The reason recorded on a thread this mode gives to a member.
    pub fn reason(self) -> AssignmentReason {
        match self {
            AssignmentMode::Balanced => AssignmentReason::Balanced,
            AssignmentMode::RoundRobin | AssignmentMode::Manual => AssignmentReason::RoundRobin,
        }
    }
}

/// The most threads a capacity may allow.
pub const MAX_CAPACITY: i32 = 10_000;

/// A team's policy: the mode and the most open + pending threads a member may hold (none: no
/// limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AssignmentPolicy {
    /// The mode.
    pub mode: AssignmentMode,
    /// The capacity, 1 to [`MAX_CAPACITY`].
    pub capacity: Option<i32>,
}

impl AssignmentPolicy {
    /// Validates a request's `assignment`.
    ///
    /// # Errors
    /// [`ValidationErrors`] naming `assignment.mode` or `assignment.capacity`.
    pub fn new(mode: &str, capacity: Option<i64>) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let mode = errors.check(AssignmentMode::parse(mode));
        let capacity = match capacity {
            None => None,
            Some(c) if (1..=i64::from(MAX_CAPACITY)).contains(&c) => i32::try_from(c).ok(),
            Some(_) => {
                errors.0.push(FieldError::new("assignment.capacity", format!("must be 1 to {MAX_CAPACITY}, or null")));
                None
            }
        };
        errors.clone().into_result()?;
        mode.map(|mode| Self { mode, capacity }).ok_or(errors)
    }

    /// Whether the team's queue is served automatically: never for a manual team (its threads
    /// wait for a person to take them).
    pub fn serves_queue(&self) -> bool {
        self.mode.serves_queue()
    }
}

/// Why a thread has its assignee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AssignmentReason {
    /// Someone chose the assignee.
    Manual,
    /// The team's round robin.
    RoundRobin,
    /// The team's balanced assignment.
    Balanced,
    /// Its team was deleted.
    TeamDeleted,
}

impl AssignmentReason {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            AssignmentReason::Manual => "manual",
            AssignmentReason::RoundRobin => "round_robin",
            AssignmentReason::Balanced => "balanced",
            AssignmentReason::TeamDeleted => "team_deleted",
        }
    }

    /// A stored reason (`None` for anything unknown).
    pub fn stored(raw: &str) -> Option<Self> {
        [Self::Manual, Self::RoundRobin, Self::Balanced, Self::TeamDeleted].into_iter().find(|r| r.as_str() == raw)
    }
}

/// The channel's default team, when it has one, as a new thread finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DefaultTeam {
    /// The team.
    pub team_id: i64,
    /// Its mode.
    pub mode: AssignmentMode,
}

/// Where a new thread starts: with the channel's default team (assignee the team), in the team's
/// queue. A team that assigns automatically serves it at once; a manual team's queue waits for
/// someone to take a thread, or for its mode to change (then the worker serves it, oldest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TeamPlacement {
    /// The team (`team_id`, and the assignee `{"type": "team"}`).
    pub team_id: i64,
    /// Whether [`assign_waiting`] decides in the same transaction (not for a manual team).
    pub served_at_once: bool,
}

/// A new thread on a channel with `default_team`: `None` without one (unassigned).
pub fn place_new_thread(default_team: Option<DefaultTeam>) -> Option<TeamPlacement> {
    default_team.map(|t| TeamPlacement { team_id: t.team_id, served_at_once: t.mode.serves_queue() })
}

/// A member of the team as the assignment sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// The member.
    pub user_id: i64,
    /// The membership is active (not deactivated).
    pub active: bool,
    /// What the member set: `online` or `away`.
    pub availability: Availability,
    /// Their `open` and `pending` threads.
    pub load: i64,
    /// When the team last gave them a thread.
    pub last_assigned_at: Option<OffsetDateTime>,
}

impl Candidate {
    /// Whether automatic assignment may give them a thread at all: an active member who is
    /// `online` (their load is weighed against the capacity apart).
    pub fn available(&self) -> bool {
        self.active && self.availability == Availability::Online
    }
}

/// What the adapter read, the team's row locked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamFacts {
    /// The policy.
    pub policy: AssignmentPolicy,
    /// The members.
    pub members: Vec<Candidate>,
    /// Waiting threads (open or pending), oldest first.
    pub waiting: Vec<i64>,
}

/// One thread given to one member; `thread.assigned` unless the thread is created in the same
/// transaction (then `thread.created` carries the assignee).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Assignment {
    /// The thread.
    pub thread_id: i64,
    /// The member.
    pub user_id: i64,
    /// `round_robin` or `balanced`.
    pub reason: AssignmentReason,
    /// The member's new turn time (`team_members.last_assigned_at`).
    pub at: OffsetDateTime,
}

impl Assignment {
    /// The event it emits (when the thread is not new), with the thread's record once assigned.
    pub fn event(&self, thread: ThreadRecord) -> DomainEvent {
        DomainEvent::ThreadAssigned(thread)
    }
}

/// The assignments `thread.assigned` announces, in their order: those of threads that existed
/// before the transaction. A thread created in the same transaction (`created`) is announced once,
/// by its `thread.created`, which already carries its assignee.
pub fn assignments_to_announce<'a>(assignments: &'a [Assignment], created: &[i64]) -> Vec<&'a Assignment> {
    assignments.iter().filter(|a| !created.contains(&a.thread_id)).collect()
}

/// Gives the waiting threads, oldest first, to eligible members until none is: online, under the
/// capacity; round robin takes the one whose turn is oldest, balanced the one with the fewest
/// threads (then the oldest turn). Nothing for a manual team.
pub fn assign_waiting(facts: &TeamFacts, now: OffsetDateTime) -> Vec<Assignment> {
    if !facts.policy.serves_queue() {
        return Vec::new();
    }
    let mode = facts.policy.mode;
    let mut members = facts.members.clone();
    let mut out = Vec::new();
    for (i, thread_id) in facts.waiting.iter().enumerate() {
        let eligible =
            members.iter_mut().filter(|m| m.available() && facts.policy.capacity.is_none_or(|c| m.load < i64::from(c)));
        // Never assigned sorts first (`None` < `Some`); the user id breaks exact ties.
        let chosen = match mode {
            AssignmentMode::Balanced => eligible.min_by_key(|m| (m.load, m.last_assigned_at, m.user_id)),
            _ => eligible.min_by_key(|m| (m.last_assigned_at, m.user_id)),
        };
        let Some(member) = chosen else { break };
        // Distinct turn times inside one decision keep the order of its assignments.
        let at = now + Duration::microseconds(i64::try_from(i).unwrap_or(i64::MAX));
        member.load += 1;
        member.last_assigned_at = Some(at);
        out.push(Assignment { thread_id: *thread_id, user_id: member.user_id, reason: mode.reason(), at });
    }
    out
}

/// A thread that a contact's message or its snooze's end just made `open` from `snoozed` or
/// `resolved` (so it now counts toward its member's load), as the capacity check sees it (its team's row and its member's membership locked by the adapter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReopenFacts {
    /// The member holding it, if a member does.
    pub holder: Option<i64>,
    /// Its team and the team's policy, if it has a team.
    pub team: Option<(i64, AssignmentPolicy)>,
    /// The member's other `open` and `pending` threads.
    pub holder_load: i64,
}

/// A reopened thread going back to its team's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReturnToTeam {
    /// The team: the thread's assignee becomes `{"type": "team"}` and it waits, served at once
    /// (or by the next pass) like any waiting thread; `thread.assigned` once, with where it went.
    pub team_id: i64,
    /// The team's policy, for serving its queue.
    pub policy: AssignmentPolicy,
}

impl ReturnToTeam {
    /// Why the thread has its new assignee (the team): the policy of a team that assigns
    /// automatically moved it, so the record's `assignment_reason` is that policy's (and
    /// `assigned_at` the time of the move). A manual team's capacity moved it without any policy
    /// of assignment: `None`, the reason stays as it was.
    pub fn reason(&self) -> Option<AssignmentReason> {
        self.policy.serves_queue().then(|| self.policy.mode.reason())
    }

    /// The event it emits, with the thread's record once served.
    pub fn event(&self, thread: ThreadRecord) -> DomainEvent {
        DomainEvent::ThreadAssigned(thread)
    }
}

/// "No member ever exceeds the capacity" holds for reopened threads too: a thread that comes back
/// to `open` from `snoozed` or `resolved` stays with its member while they have room under their
/// team's capacity (the customer keeps their agent), and goes back to the team's queue when they
/// are at it (someone with room answers, instead of the member being pushed over). Threads without
/// a team, or whose team has no capacity, stay with their member.
pub fn decide_reopen_capacity(facts: ReopenFacts) -> Option<ReturnToTeam> {
    let (team_id, policy) = facts.team?;
    let capacity = policy.capacity?;
    facts.holder?;
    if facts.holder_load < i64::from(capacity) {
        return None;
    }
    Some(ReturnToTeam { team_id, policy })
}

/// How many of the team's waiting threads one decision reads: enough for a burst, bounded so a
/// long queue costs one page per pass.
pub const WAITING_BATCH: i64 = 200;

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-11-26 12:00:00 UTC);

    fn member(user_id: i64, available: bool, load: i64, last: Option<i64>) -> Candidate {
        let availability = if available { Availability::Online } else { Availability::Away };
        Candidate {
            user_id,
            active: true,
            availability,
            load,
            last_assigned_at: last.map(|s| NOW - Duration::seconds(s)),
        }
    }

    #[test]
    fn only_active_online_members_are_available() {
        for (active, availability, available) in [
            (true, Availability::Online, true),
            (true, Availability::Away, false),
            (false, Availability::Online, false),
            (false, Availability::Away, false),
        ] {
            let m = Candidate { active, availability, ..member(1, true, 0, None) };
            assert_eq!(m.available(), available, "{active} {availability:?}");
        }
    }

    fn facts(mode: AssignmentMode, capacity: Option<i32>, members: Vec<Candidate>, waiting: usize) -> TeamFacts {
        TeamFacts { policy: AssignmentPolicy { mode, capacity }, members, waiting: (1..=waiting as i64).collect() }
    }

    fn who(a: &[Assignment]) -> Vec<(i64, i64)> {
        a.iter().map(|a| (a.thread_id, a.user_id)).collect()
    }

    #[test]
    fn policies_are_validated() {
        assert_eq!(
            AssignmentPolicy::new("balanced", Some(5)),
            Ok(AssignmentPolicy { mode: AssignmentMode::Balanced, capacity: Some(5) })
        );
        let fields = |e: ValidationErrors| e.0.into_iter().map(|f| f.field).collect::<Vec<_>>();
        assert_eq!(fields(AssignmentPolicy::new("balanced", Some(0)).expect_err("0")), ["assignment.capacity"]);
        assert_eq!(fields(AssignmentPolicy::new("random", None).expect_err("mode")), ["assignment.mode"]);
    }

    #[test]
    fn a_new_thread_joins_the_default_teams_queue_served_at_once_unless_manual() {
        assert_eq!(place_new_thread(None), None);
        let manual = DefaultTeam { team_id: 3, mode: AssignmentMode::Manual };
        assert_eq!(place_new_thread(Some(manual)), Some(TeamPlacement { team_id: 3, served_at_once: false }));
        let rr = DefaultTeam { team_id: 3, mode: AssignmentMode::RoundRobin };
        assert_eq!(place_new_thread(Some(rr)), Some(TeamPlacement { team_id: 3, served_at_once: true }));
        assert_eq!(AssignmentMode::serving(), ["round_robin", "balanced"]);
    }

    #[test]
    fn manual_teams_assign_nothing() {
        assert!(assign_waiting(&facts(AssignmentMode::Manual, None, vec![member(1, true, 0, None)], 3), NOW).is_empty());
    }

    #[test]
    fn a_reopened_thread_stays_with_its_member_unless_it_would_take_them_over_capacity() {
        let policy = AssignmentPolicy { mode: AssignmentMode::Balanced, capacity: Some(3) };
        let facts =
            |load, team: Option<(i64, AssignmentPolicy)>| ReopenFacts { holder: Some(5), team, holder_load: load };
        assert_eq!(decide_reopen_capacity(facts(2, Some((9, policy)))), None, "room for one more");
        assert_eq!(
            decide_reopen_capacity(facts(3, Some((9, policy)))),
            Some(ReturnToTeam { team_id: 9, policy }),
            "at capacity: back to the team"
        );
        assert_eq!(
            ReturnToTeam { team_id: 9, policy }.reason(),
            Some(AssignmentReason::Balanced),
            "moved by its policy"
        );
        let manual = AssignmentPolicy { mode: AssignmentMode::Manual, ..policy };
        assert_eq!(ReturnToTeam { team_id: 9, policy: manual }.reason(), None, "no policy of assignment");
        assert_eq!(decide_reopen_capacity(facts(50, None)), None, "no team, no capacity");
        let unlimited = AssignmentPolicy { capacity: None, ..policy };
        assert_eq!(decide_reopen_capacity(facts(50, Some((9, unlimited)))), None);
        let unheld = ReopenFacts { holder: None, ..facts(50, Some((9, policy))) };
        assert_eq!(decide_reopen_capacity(unheld), None, "a thread no member holds");
    }

    #[test]
    fn threads_created_in_the_same_transaction_get_no_thread_assigned() {
        let members = vec![member(1, true, 0, None), member(2, true, 0, None)];
        let a = assign_waiting(&facts(AssignmentMode::RoundRobin, None, members, 4), NOW);
        let announced: Vec<i64> = assignments_to_announce(&a, &[2, 4]).iter().map(|a| a.thread_id).collect();
        assert_eq!(announced, [1, 3]);
        assert_eq!(assignments_to_announce(&a, &[]).len(), 4);
        assert!(assignments_to_announce(&a, &[1, 2, 3, 4]).is_empty());
    }

    #[test]
    fn round_robin_takes_members_in_turn_and_skips_away_ones() {
        let members = vec![member(1, true, 9, Some(10)), member(2, false, 0, None), member(3, true, 0, Some(20))];
        let a = assign_waiting(&facts(AssignmentMode::RoundRobin, None, members, 4), NOW);
        assert_eq!(who(&a), [(1, 3), (2, 1), (3, 3), (4, 1)]);
        assert!(a.iter().all(|a| a.reason == AssignmentReason::RoundRobin));
        assert!(a.windows(2).all(|w| w[0].at < w[1].at));
    }

    #[test]
    fn balanced_takes_the_least_loaded_then_the_longest_waiting_for_a_turn() {
        let members = vec![member(1, true, 2, Some(50)), member(2, true, 1, Some(10)), member(3, true, 1, Some(30))];
        let a = assign_waiting(&facts(AssignmentMode::Balanced, None, members, 3), NOW);
        // 3 and 2 have one thread (3's turn is older), then 2 is the only one at one.
        assert_eq!(who(&a), [(1, 3), (2, 2), (3, 1)]);
        assert!(a.iter().all(|a| a.reason == AssignmentReason::Balanced));
    }

    #[test]
    fn nobody_goes_over_capacity_and_the_rest_wait_oldest_first() {
        let members = vec![member(1, true, 0, None), member(2, true, 4, None), member(3, true, 5, None)];
        let a = assign_waiting(&facts(AssignmentMode::Balanced, Some(5), members, 10), NOW);
        // 1 takes five, 2 one; 3 is full; threads 7 to 10 wait.
        assert_eq!(a.len(), 6);
        assert_eq!(a.iter().filter(|a| a.user_id == 1).count(), 5);
        assert_eq!(a.iter().map(|a| a.thread_id).collect::<Vec<_>>(), [1, 2, 3, 4, 5, 6]);
        let rr = vec![member(1, true, 1, None)];
        assert_eq!(assign_waiting(&facts(AssignmentMode::RoundRobin, Some(1), rr, 2), NOW), []);
    }
}
