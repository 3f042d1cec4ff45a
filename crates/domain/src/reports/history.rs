//! A thread's stored history replayed through [`decide`]: what the reports of a thread hold when
//! its messages were stored before the reports existed (or were written by the demo generator).
//! The adapter loads the history; this orders it into the events the live path would have seen
//! and folds [`decide`] over them, so a backfilled figure is computed exactly as a live one.

use time::OffsetDateTime;

use super::facts::{decide, ConversationEvent, ConversationFact, Cycle, Responder, ThreadAtEvent};
use crate::business_hours::BusinessHours;

/// One stored message of the thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PastMessage {
    /// Its `created_at`.
    pub at: OffsetDateTime,
    /// `None` for a message of the contact, else who wrote the message to the contact.
    pub outbound_by: Option<Responder>,
}

/// What is known of a thread's past.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ThreadHistory {
    /// Its messages, in the order they were stored.
    pub messages: Vec<PastMessage>,
    /// Its recorded status changes (`at`, became `resolved`), oldest first.
    pub status_changes: Vec<(OffsetDateTime, bool)>,
    /// When no status change is recorded: when the thread, `resolved` now, was last updated.
    pub resolved_now_at: Option<OffsetDateTime>,
}

/// What the backfill knows of a thread besides its stored history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackfillThread {
    /// When its first fact was recorded live, if one was: the live path figured everything from
    /// then on.
    pub live_since: Option<OffsetDateTime>,
    /// Whether it is `resolved` now.
    pub resolved_now: bool,
    /// When it was last updated.
    pub updated_at: OffsetDateTime,
    /// When it was noted for the backfill.
    pub noted_at: OffsetDateTime,
}

impl ThreadHistory {
    /// The part of the history a backfill replays for `thread`: what came before its first live
    /// fact (the rest the live path recorded); and, with no live fact, a thread `resolved` now
    /// and last updated before it was noted counts as resolved at that update.
    pub fn for_backfill(mut self, thread: &BackfillThread) -> Self {
        if let Some(live) = thread.live_since {
            self.messages.retain(|m| m.at < live);
            self.status_changes.retain(|s| s.0 < live);
        }
        if thread.resolved_now && thread.live_since.is_none() && thread.updated_at < thread.noted_at {
            self.resolved_now_at = Some(thread.updated_at);
        }
        self
    }
}

/// What replaying a history stores: the cycle the thread is in afterwards, and every fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    /// The thread's cycle after its history (`None`: no conversation started).
    pub cycle: Option<Cycle>,
    /// The facts, in the order the events happened.
    pub facts: Vec<ConversationFact>,
}

/// The events of `history` in the order they happened. A message and a status change at the same
/// instant: the message first (a reply is stored before the thread is resolved with it; a reopen
/// is recorded after the message that caused it). A message of the contact to a thread that its
/// recorded changes leave `resolved` starts a new cycle, as it does live; without recorded changes
/// a thread `resolved` now is resolved once, after its last message.
pub fn events(history: &ThreadHistory) -> Vec<ConversationEvent> {
    enum Step {
        Message(PastMessage),
        Status(bool),
    }
    let mut steps: Vec<(OffsetDateTime, u8, usize, Step)> = Vec::new();
    for (i, m) in history.messages.iter().enumerate() {
        steps.push((m.at, 0, i, Step::Message(*m)));
    }
    for (i, (at, resolved)) in history.status_changes.iter().enumerate() {
        steps.push((*at, 1, i, Step::Status(*resolved)));
    }
    steps.sort_by_key(|s| (s.0, s.1, s.2));
    let mut out = Vec::with_capacity(steps.len() + 1);
    let mut resolved = false;
    for (at, _, _, step) in steps {
        match step {
            Step::Message(PastMessage { outbound_by: None, .. }) => {
                out.push(ConversationEvent::Inbound { at, was_resolved: resolved });
                resolved = false;
            }
            Step::Message(PastMessage { outbound_by: Some(by), .. }) => {
                out.push(ConversationEvent::Outbound { at, by })
            }
            Step::Status(true) if !resolved => {
                out.push(ConversationEvent::Resolved { at });
                resolved = true;
            }
            Step::Status(now_resolved) => resolved = now_resolved,
        }
    }
    if history.status_changes.is_empty() {
        if let Some(at) = history.resolved_now_at {
            let last = history.messages.iter().map(|m| m.at).max();
            out.push(ConversationEvent::Resolved { at: last.map_or(at, |l| l.max(at)) });
        }
    }
    out
}

/// Replays `history` from no cycle through [`decide`] with the thread as it is now and the hours
/// in force.
pub fn replay(history: &ThreadHistory, thread: ThreadAtEvent, hours: &BusinessHours) -> Replay {
    let mut cycle = None;
    let mut facts = Vec::new();
    for event in events(history) {
        let d = decide(cycle, thread, event, hours);
        cycle = d.cycle;
        facts.extend(d.facts);
    }
    Replay { cycle, facts }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;
    use time::Duration;

    use super::*;
    use crate::reports::FactKind;

    const T0: OffsetDateTime = datetime!(2026-11-20 10:00:00 UTC);
    const THREAD: ThreadAtEvent = ThreadAtEvent { team_id: Some(3), assignee_user_id: Some(7) };

    fn at(min: i64) -> OffsetDateTime {
        T0 + Duration::minutes(min)
    }

    fn msg(min: i64, outbound_by: Option<Responder>) -> PastMessage {
        PastMessage { at: at(min), outbound_by }
    }

    fn kinds(r: &Replay) -> Vec<(FactKind, Option<i64>)> {
        r.facts.iter().map(|f| (f.kind, f.seconds)).collect()
    }

    fn backfill(live_since: Option<OffsetDateTime>, resolved_now: bool, updated: i64) -> BackfillThread {
        BackfillThread { live_since, resolved_now, updated_at: at(updated), noted_at: at(30) }
    }

    #[test]
    fn a_backfill_replays_only_what_came_before_the_first_live_fact() {
        let history = ThreadHistory {
            messages: vec![msg(0, None), msg(5, Some(Responder::User(9))), msg(10, None)],
            status_changes: vec![(at(4), true), (at(10), false)],
            resolved_now_at: None,
        };
        let cut = history.for_backfill(&backfill(Some(at(10)), true, 20));
        assert_eq!(cut.messages, vec![msg(0, None), msg(5, Some(Responder::User(9)))]);
        assert_eq!(cut.status_changes, vec![(at(4), true)]);
        assert_eq!(cut.resolved_now_at, None, "a thread with live facts is not taken as resolved at its update");
    }

    #[test]
    fn a_backfilled_thread_resolved_now_counts_as_resolved_at_its_update_before_it_was_noted() {
        let history = ThreadHistory { messages: vec![msg(0, None)], ..ThreadHistory::default() };
        assert_eq!(history.clone().for_backfill(&backfill(None, true, 20)).resolved_now_at, Some(at(20)));
        assert_eq!(history.clone().for_backfill(&backfill(None, true, 30)).resolved_now_at, None);
        assert_eq!(history.for_backfill(&backfill(None, false, 20)).resolved_now_at, None);
    }

    #[test]
    fn a_history_gives_the_facts_the_live_events_give() {
        use FactKind::*;
        let history = ThreadHistory {
            messages: vec![
                msg(0, None),
                msg(3, Some(Responder::User(9))),
                msg(10, None),
                msg(12, Some(Responder::AiAgent)),
            ],
            status_changes: vec![(at(3), true), (at(10), false)],
            resolved_now_at: None,
        };
        let r = replay(&history, THREAD, &BusinessHours::always());
        assert_eq!(
            kinds(&r),
            [
                (Conversation, None),
                (Incoming, None),
                (Outgoing, None),
                (FirstResponse, Some(180)),
                (Reply, Some(180)),
                (Resolution, Some(180)),
                (Conversation, None),
                (Incoming, None),
                (Outgoing, None),
                (FirstResponseAi, Some(120)),
                (Reply, Some(120)),
            ],
            "the reply at minute 3 counts before the resolution at the same instant; the message at 10 reopens"
        );
        assert_eq!(r.cycle.map(|c| c.started_at), Some(at(10)));
    }

    #[test]
    fn without_recorded_changes_a_thread_resolved_now_is_resolved_after_its_last_message() {
        let history = ThreadHistory {
            messages: vec![msg(0, None), msg(5, Some(Responder::User(9)))],
            status_changes: vec![],
            resolved_now_at: Some(at(2)),
        };
        let r = replay(&history, THREAD, &BusinessHours::always());
        let last = r.facts.last().expect("facts");
        assert_eq!((last.kind, last.seconds, last.user_id), (FactKind::Resolution, Some(300), Some(7)));
        let open = ThreadHistory { resolved_now_at: None, ..history };
        assert!(replay(&open, THREAD, &BusinessHours::always()).facts.iter().all(|f| f.kind != FactKind::Resolution));
    }

    #[test]
    fn repeated_resolutions_count_once_and_an_empty_history_adds_nothing() {
        let history = ThreadHistory {
            messages: vec![msg(0, None)],
            status_changes: vec![(at(1), true), (at(2), true)],
            resolved_now_at: Some(at(2)),
        };
        let r = replay(&history, THREAD, &BusinessHours::always());
        assert_eq!(r.facts.iter().filter(|f| f.kind == FactKind::Resolution).count(), 1);
        assert_eq!(
            replay(&ThreadHistory::default(), THREAD, &BusinessHours::always()),
            Replay { cycle: None, facts: vec![] }
        );
    }
}
