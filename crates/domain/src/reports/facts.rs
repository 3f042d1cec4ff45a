//! What each conversation event adds to the report: a pure decision over the thread's current
//! cycle (docs/contract.md, "Conversation reports, business hours and SLAs"). The adapter loads
//! the cycle, the thread and the business hours in the event's transaction, calls [`decide`] and
//! stores the new cycle and the facts, so every figure is computed once, when it happens.

use time::OffsetDateTime;

use crate::business_hours::BusinessHours;
use crate::messaging::Sender;

/// What a fact counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FactKind {
    /// A cycle started (`conversations`).
    Conversation,
    /// A message of the contact (`incoming_messages`).
    Incoming,
    /// A message to the contact (`outgoing_messages`).
    Outgoing,
    /// Cycle start → first message by a user (`first_response`).
    FirstResponse,
    /// Cycle start → first message by an AI agent (`first_response_ai`).
    FirstResponseAi,
    /// First inbound of a run → next outbound by a user or AI agent (`reply`).
    Reply,
    /// Cycle start → the thread resolved (`resolution`, and `resolutions`).
    Resolution,
    /// An SLA of the thread was met (`sla.hit`).
    SlaHit,
    /// An SLA of the thread was missed (`sla.missed`).
    SlaMissed,
}

impl FactKind {
    /// Every kind, in stored-code order.
    pub const ALL: [FactKind; 9] = [
        FactKind::Conversation,
        FactKind::Incoming,
        FactKind::Outgoing,
        FactKind::FirstResponse,
        FactKind::FirstResponseAi,
        FactKind::Reply,
        FactKind::Resolution,
        FactKind::SlaHit,
        FactKind::SlaMissed,
    ];

    /// The stored code.
    pub fn code(self) -> i16 {
        match self {
            FactKind::Conversation => 1,
            FactKind::Incoming => 2,
            FactKind::Outgoing => 3,
            FactKind::FirstResponse => 4,
            FactKind::FirstResponseAi => 5,
            FactKind::Reply => 6,
            FactKind::Resolution => 7,
            FactKind::SlaHit => 8,
            FactKind::SlaMissed => 9,
        }
    }

    /// The kind of a stored code.
    pub fn from_code(code: i16) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.code() == code)
    }
}

/// A thread's current cycle, as stored between events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cycle {
    /// The cycle's first inbound message's `created_at`.
    pub started_at: OffsetDateTime,
    /// When a user first answered in this cycle.
    pub first_response_at: Option<OffsetDateTime>,
    /// When an AI agent first answered in this cycle.
    pub first_response_ai_at: Option<OffsetDateTime>,
    /// The first inbound message of the run that awaits a reply.
    pub awaiting_since: Option<OffsetDateTime>,
}

/// The thread as the event finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadAtEvent {
    /// Its team now (a team figure goes to the team the thread had then).
    pub team_id: Option<i64>,
    /// The user it is assigned to now (whose conversations, incoming messages, resolutions and
    /// SLA outcomes these are in `group_by=agent`).
    pub assignee_user_id: Option<i64>,
}

/// Who wrote an outbound message, as far as the report cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Responder {
    /// A member.
    User(i64),
    /// An AI agent.
    AiAgent,
    /// Anyone else (an API key): counted as outgoing, never a response.
    Other,
}

impl Responder {
    /// Who the sender of an outbound message is to the report.
    pub fn of(sender: Sender) -> Self {
        match sender {
            Sender::User(id) => Responder::User(id),
            Sender::AiAgent(_) => Responder::AiAgent,
            Sender::Contact(_) | Sender::ApiKey(_) => Responder::Other,
        }
    }
}

/// Something that happened to a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConversationEvent {
    /// The contact wrote (`at`: the platform's timestamp). `was_resolved`: the thread was
    /// `resolved` when the message came, so a new cycle starts.
    Inbound {
        /// The message's `created_at`.
        at: OffsetDateTime,
        /// The thread's status before the message was `resolved`.
        was_resolved: bool,
    },
    /// A message to the contact.
    Outbound {
        /// The message's `created_at`.
        at: OffsetDateTime,
        /// Who wrote it.
        by: Responder,
    },
    /// The thread became `resolved`.
    Resolved {
        /// When.
        at: OffsetDateTime,
    },
    /// An SLA outcome of the thread's cycle (written by the SLA worker).
    SlaOutcome {
        /// When the SLA was met or missed.
        at: OffsetDateTime,
        /// Met (`true`) or missed.
        hit: bool,
    },
}

/// One stored figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConversationFact {
    /// What it counts.
    pub kind: FactKind,
    /// When it happened: the period it belongs to.
    pub at: OffsetDateTime,
    /// Start of the duration (duration kinds only).
    pub started_at: Option<OffsetDateTime>,
    /// Wall-clock seconds (duration kinds only).
    pub seconds: Option<i64>,
    /// Business seconds with the hours in force (duration kinds only).
    pub business_seconds: Option<i64>,
    /// The user it belongs to in `group_by=agent`.
    pub user_id: Option<i64>,
    /// The thread's team at the time.
    pub team_id: Option<i64>,
}

/// What to store after an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleDecision {
    /// The thread's cycle after the event (`None`: unchanged and absent).
    pub cycle: Option<Cycle>,
    /// The facts to add.
    pub facts: Vec<ConversationFact>,
}

impl ConversationFact {
    fn count(kind: FactKind, at: OffsetDateTime, user_id: Option<i64>, thread: ThreadAtEvent) -> Self {
        Self { kind, at, started_at: None, seconds: None, business_seconds: None, user_id, team_id: thread.team_id }
    }

    fn duration(
        kind: FactKind,
        from: OffsetDateTime,
        at: OffsetDateTime,
        user_id: Option<i64>,
        thread: ThreadAtEvent,
        hours: &BusinessHours,
    ) -> Self {
        Self {
            kind,
            at,
            started_at: Some(from),
            seconds: Some((at - from).whole_seconds().max(0)),
            business_seconds: Some(hours.business_seconds(from, at)),
            user_id,
            team_id: thread.team_id,
        }
    }

    /// The same fact with its business seconds computed with `hours` (after the hours change).
    pub fn refigured(self, hours: &BusinessHours) -> Self {
        match self.started_at {
            Some(from) => Self { business_seconds: Some(hours.business_seconds(from, self.at)), ..self },
            None => self,
        }
    }
}

/// The facts an event adds and the thread's cycle after it.
pub fn decide(
    cycle: Option<Cycle>,
    thread: ThreadAtEvent,
    event: ConversationEvent,
    hours: &BusinessHours,
) -> CycleDecision {
    let assignee = thread.assignee_user_id;
    match event {
        ConversationEvent::Inbound { at, was_resolved } => match cycle {
            Some(c) if !was_resolved => {
                let awaiting_since = Some(c.awaiting_since.map_or(at, |s| s.min(at)));
                CycleDecision {
                    cycle: Some(Cycle { awaiting_since, ..c }),
                    facts: vec![ConversationFact::count(FactKind::Incoming, at, assignee, thread)],
                }
            }
            _ => CycleDecision {
                cycle: Some(Cycle {
                    started_at: at,
                    first_response_at: None,
                    first_response_ai_at: None,
                    awaiting_since: Some(at),
                }),
                facts: vec![
                    ConversationFact::count(FactKind::Conversation, at, assignee, thread),
                    ConversationFact::count(FactKind::Incoming, at, assignee, thread),
                ],
            },
        },
        ConversationEvent::Outbound { at, by } => {
            let user = match by {
                Responder::User(id) => Some(id),
                Responder::AiAgent | Responder::Other => None,
            };
            let mut facts = vec![ConversationFact::count(FactKind::Outgoing, at, user, thread)];
            let Some(mut c) = cycle else { return CycleDecision { cycle: None, facts } };
            match by {
                Responder::User(id) if c.first_response_at.is_none() => {
                    facts.push(ConversationFact::duration(
                        FactKind::FirstResponse,
                        c.started_at,
                        at,
                        Some(id),
                        thread,
                        hours,
                    ));
                    c.first_response_at = Some(at);
                }
                Responder::AiAgent if c.first_response_ai_at.is_none() => {
                    facts.push(ConversationFact::duration(
                        FactKind::FirstResponseAi,
                        c.started_at,
                        at,
                        None,
                        thread,
                        hours,
                    ));
                    c.first_response_ai_at = Some(at);
                }
                _ => {}
            }
            if let (Some(since), Responder::User(_) | Responder::AiAgent) = (c.awaiting_since, by) {
                facts.push(ConversationFact::duration(FactKind::Reply, since, at, user, thread, hours));
                c.awaiting_since = None;
            }
            CycleDecision { cycle: Some(c), facts }
        }
        ConversationEvent::Resolved { at } => match cycle {
            Some(c) => CycleDecision {
                cycle: Some(Cycle { awaiting_since: None, ..c }),
                facts: vec![ConversationFact::duration(
                    FactKind::Resolution,
                    c.started_at,
                    at,
                    assignee,
                    thread,
                    hours,
                )],
            },
            None => CycleDecision { cycle: None, facts: Vec::new() },
        },
        ConversationEvent::SlaOutcome { at, hit } => {
            let kind = if hit { FactKind::SlaHit } else { FactKind::SlaMissed };
            CycleDecision { cycle, facts: vec![ConversationFact::count(kind, at, assignee, thread)] }
        }
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;
    use time::Duration;

    use super::*;

    const T0: OffsetDateTime = datetime!(2026-11-20 10:00:00 UTC);
    const THREAD: ThreadAtEvent = ThreadAtEvent { team_id: Some(3), assignee_user_id: Some(7) };

    fn run(events: &[ConversationEvent]) -> Vec<(FactKind, Option<i64>, Option<i64>)> {
        let hours = BusinessHours::always();
        let mut cycle = None;
        let mut out = Vec::new();
        for e in events {
            let d = decide(cycle, THREAD, *e, &hours);
            cycle = d.cycle;
            out.extend(d.facts.iter().map(|f| (f.kind, f.seconds, f.user_id)));
        }
        out
    }

    fn inbound(min: i64, was_resolved: bool) -> ConversationEvent {
        ConversationEvent::Inbound { at: T0 + Duration::minutes(min), was_resolved }
    }

    fn outbound(min: i64, by: Responder) -> ConversationEvent {
        ConversationEvent::Outbound { at: T0 + Duration::minutes(min), by }
    }

    #[test]
    fn a_cycle_measures_first_responses_apart_and_replies_from_the_first_of_a_run() {
        use FactKind::*;
        let facts = run(&[
            inbound(0, false),
            inbound(1, false),
            outbound(2, Responder::AiAgent),
            outbound(5, Responder::User(9)),
            inbound(10, false),
            outbound(14, Responder::Other),
            outbound(16, Responder::User(9)),
            ConversationEvent::Resolved { at: T0 + Duration::minutes(20) },
        ]);
        assert_eq!(
            facts,
            [
                (Conversation, None, Some(7)),
                (Incoming, None, Some(7)),
                (Incoming, None, Some(7)),
                (Outgoing, None, None),
                (FirstResponseAi, Some(120), None),
                (Reply, Some(120), None),
                (Outgoing, None, Some(9)),
                (FirstResponse, Some(300), Some(9)),
                (Incoming, None, Some(7)),
                (Outgoing, None, None),
                (Outgoing, None, Some(9)),
                (Reply, Some(360), Some(9)),
                (Resolution, Some(1200), Some(7)),
            ]
        );
    }

    #[test]
    fn an_inbound_message_to_a_resolved_thread_starts_a_new_cycle() {
        use FactKind::*;
        let facts = run(&[
            inbound(0, false),
            outbound(1, Responder::User(9)),
            ConversationEvent::Resolved { at: T0 + Duration::minutes(2) },
            inbound(60, true),
            outbound(65, Responder::User(9)),
        ]);
        let kinds: Vec<FactKind> = facts.iter().map(|f| f.0).collect();
        assert_eq!(
            kinds,
            [
                Conversation,
                Incoming,
                Outgoing,
                FirstResponse,
                Reply,
                Resolution,
                Conversation,
                Incoming,
                Outgoing,
                FirstResponse,
                Reply
            ]
        );
        assert_eq!(facts[9], (FirstResponse, Some(300), Some(9)), "measured from the reopening message");
    }

    #[test]
    fn outbound_messages_without_a_cycle_only_count() {
        assert_eq!(run(&[outbound(0, Responder::User(1))]), [(FactKind::Outgoing, None, Some(1))]);
        assert!(run(&[ConversationEvent::Resolved { at: T0 }]).is_empty());
    }

    #[test]
    fn business_seconds_use_the_hours_in_force() {
        let closed_now = BusinessHours::from_record(&crate::business_hours::BusinessHoursRecord {
            timezone: "UTC".into(),
            days: [("mon".to_owned(), vec![vec!["09:00".to_owned(), "10:00".to_owned()]])].into(),
            holidays: vec![],
        })
        .expect("valid");
        let start = decide(None, THREAD, inbound(0, false), &closed_now).cycle;
        let d = decide(start, THREAD, outbound(30, Responder::User(1)), &closed_now);
        let first = d.facts.iter().find(|f| f.kind == FactKind::FirstResponse).expect("first response");
        assert_eq!((first.seconds, first.business_seconds), (Some(1800), Some(0)), "a Friday outside the hours");
        assert_eq!(first.refigured(&BusinessHours::always()).business_seconds, Some(1800));
    }
}
