//! Message values and entities.

use std::str::FromStr;

use time::OffsetDateTime;

use crate::channels::ChannelId;
use crate::common::error::FieldError;

/// A message's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MessageId(pub i64);

/// A thread's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId(pub i64);

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// From the contact.
    Inbound,
    /// To the contact.
    Outbound,
}

impl Direction {
    /// Wire and stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Inbound => "inbound",
            Direction::Outbound => "outbound",
        }
    }
}

impl FromStr for Direction {
    type Err = FieldError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "inbound" => Ok(Direction::Inbound),
            "outbound" => Ok(Direction::Outbound),
            _ => Err(FieldError::new("direction", "must be `inbound` or `outbound`")),
        }
    }
}

/// Delivery status. The order is the order of progress; `failed` is terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum MessageStatus {
    /// Accepted, waiting to be sent.
    Queued,
    /// Handed to the platform.
    Sent,
    /// Reached the contact's device.
    Delivered,
    /// Read by the contact.
    Read,
    /// The platform refused or could not deliver it.
    Failed,
}

impl MessageStatus {
    /// Every status.
    pub const ALL: [MessageStatus; 5] = [
        MessageStatus::Queued,
        MessageStatus::Sent,
        MessageStatus::Delivered,
        MessageStatus::Read,
        MessageStatus::Failed,
    ];

    /// Wire and stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            MessageStatus::Queued => "queued",
            MessageStatus::Sent => "sent",
            MessageStatus::Delivered => "delivered",
            MessageStatus::Read => "read",
            MessageStatus::Failed => "failed",
        }
    }
}

impl MessageStatus {
    /// Whether a message in this status reached `stage` of the delivery funnel: a message that
    /// reached a stage counts in every stage before it (`delivered` includes `read`, `sent`
    /// includes both); `queued` and `failed` reach none. Every rollup and report counts by this
    /// rule through its SQL twin `wms_message_reached` (`crates/adapters-postgres/sql/functions/`),
    /// which a test keeps equal to it.
    pub fn reached(self, stage: FunnelStage) -> bool {
        let rank = |s: MessageStatus| match s {
            MessageStatus::Queued | MessageStatus::Failed => 0,
            MessageStatus::Sent => 1,
            MessageStatus::Delivered => 2,
            MessageStatus::Read => 3,
        };
        let needed = match stage {
            FunnelStage::Sent => 1,
            FunnelStage::Delivered => 2,
            FunnelStage::Read => 3,
        };
        rank(self) >= needed
    }
}

/// A stage of the outbound delivery funnel, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FunnelStage {
    /// Handed to the platform.
    Sent,
    /// On the contact's device.
    Delivered,
    /// Read by the contact.
    Read,
}

impl FunnelStage {
    /// Every stage, in funnel order.
    pub const ALL: [FunnelStage; 3] = [FunnelStage::Sent, FunnelStage::Delivered, FunnelStage::Read];

    /// The stage's name, as the SQL twin takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            FunnelStage::Sent => "sent",
            FunnelStage::Delivered => "delivered",
            FunnelStage::Read => "read",
        }
    }
}

impl FromStr for MessageStatus {
    type Err = FieldError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MessageStatus::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| FieldError::new("status", "must be one of queued, sent, delivered, read, failed"))
    }
}

/// A message as the API shows it (`docs/contract.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Its id.
    pub id: MessageId,
    /// The channel it went through.
    pub channel_id: ChannelId,
    /// Its thread.
    pub thread_id: ThreadId,
    /// Which way.
    pub direction: Direction,
    /// The text.
    pub content: String,
    /// Delivery status.
    pub status: MessageStatus,
    /// When it was created.
    pub created_at: OffsetDateTime,
    /// Who sent it.
    pub sender: Sender,
}

/// Who sent a message: the contact (inbound), a member, an AI agent, or an API key (`None` for
/// messages stored before senders were recorded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sender {
    /// The contact, by id.
    Contact(i64),
    /// A member, by user id.
    User(i64),
    /// An AI agent, by id.
    AiAgent(i64),
    /// An API key, by id when known.
    ApiKey(Option<i64>),
}

impl Sender {
    /// The wire and stored kind: `contact`, `user`, `ai_agent` or `api_key`.
    pub fn kind(self) -> &'static str {
        match self {
            Sender::Contact(_) => "contact",
            Sender::User(_) => "user",
            Sender::AiAgent(_) => "ai_agent",
            Sender::ApiKey(_) => "api_key",
        }
    }

    /// The id of the contact, user, agent or key.
    pub fn id(self) -> Option<i64> {
        match self {
            Sender::Contact(id) | Sender::User(id) | Sender::AiAgent(id) => Some(id),
            Sender::ApiKey(id) => id,
        }
    }

    /// A stored sender (`kind`, `id`); an unknown kind reads as an unknown key.
    pub fn stored(kind: &str, id: Option<i64>) -> Self {
        match (kind, id) {
            ("contact", Some(id)) => Sender::Contact(id),
            ("user", Some(id)) => Sender::User(id),
            ("ai_agent", Some(id)) => Sender::AiAgent(id),
            (_, id) => Sender::ApiKey(id),
        }
    }
}

/// Filters of a message listing; all optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MessageFilter {
    /// Only this channel.
    pub channel_id: Option<ChannelId>,
    /// Only this thread.
    pub thread_id: Option<ThreadId>,
    /// Only this status.
    pub status: Option<MessageStatus>,
    /// Only this direction.
    pub direction: Option<Direction>,
    /// Created at or after.
    pub since: Option<OffsetDateTime>,
    /// Created before.
    pub until: Option<OffsetDateTime>,
}

impl MessageFilter {
    /// The canonical filter set its list cursors are bound to.
    pub fn cursor_key(&self) -> crate::common::page::FilterKey {
        crate::common::page::FilterKey::default()
            .with("channel_id", self.channel_id.map(|c| c.0))
            .with("thread_id", self.thread_id.map(|t| t.0))
            .with("status", self.status.map(MessageStatus::as_str))
            .with("direction", self.direction.map(Direction::as_str))
            .with("since", self.since.map(OffsetDateTime::unix_timestamp_nanos))
            .with("until", self.until.map(OffsetDateTime::unix_timestamp_nanos))
    }
}

impl MessageStatus {
    /// Whether a platform callback may move a message from `self` to `next`. Statuses only move
    /// forward (queued → sent → delivered → read), so late or repeated callbacks change nothing;
    /// `failed` replaces only a status the contact has not reached (queued or sent).
    pub fn can_advance_to(self, next: MessageStatus) -> bool {
        match (self, next) {
            (_, MessageStatus::Queued) => false,
            (MessageStatus::Failed, _) => false,
            (MessageStatus::Queued | MessageStatus::Sent, MessageStatus::Failed) => true,
            (_, MessageStatus::Failed) => false,
            (current, next) => next > current,
        }
    }

    /// The earlier steps this status implies, whose times a move to it fills with its own when
    /// they are not stamped yet: a read receipt implies delivery, a delivery the send (never a
    /// later time than the step that implies them).
    pub fn implied_steps(self) -> &'static [MessageStatus] {
        match self {
            MessageStatus::Read => &[MessageStatus::Sent, MessageStatus::Delivered],
            MessageStatus::Delivered => &[MessageStatus::Sent],
            MessageStatus::Queued | MessageStatus::Sent | MessageStatus::Failed => &[],
        }
    }
}

/// A message's move to a status a platform (or the dispatcher) reports, decided: the status to
/// write, stamped with the move's time, and the implied steps' times to fill
/// ([`MessageStatus::implied_steps`]). It emits `message.status_updated` once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusAdvance {
    /// The new status.
    pub status: MessageStatus,
    /// The earlier steps whose times are filled with the same time when unset.
    pub implied: &'static [MessageStatus],
}

impl StatusAdvance {
    /// The event the move emits, with the message once moved.
    pub fn event(&self, message: Message) -> crate::webhooks::DomainEvent {
        crate::webhooks::DomainEvent::MessageStatusUpdated(message.into())
    }
}

/// A reported move from `current` to `next`: `None` when it is not forward
/// ([`MessageStatus::can_advance_to`]: nothing written, no event).
pub fn decide_advance(current: MessageStatus, next: MessageStatus) -> Option<StatusAdvance> {
    current.can_advance_to(next).then_some(StatusAdvance { status: next, implied: next.implied_steps() })
}

#[cfg(test)]
mod advance_tests {
    use super::MessageStatus::{self, *};
    use super::{decide_advance, StatusAdvance};

    #[test]
    fn a_forward_move_fills_the_steps_it_implies_and_a_late_one_is_nothing() {
        assert_eq!(decide_advance(Queued, Read), Some(StatusAdvance { status: Read, implied: &[Sent, Delivered] }));
        assert_eq!(decide_advance(Sent, Delivered), Some(StatusAdvance { status: Delivered, implied: &[Sent] }));
        assert_eq!(decide_advance(Queued, Sent), Some(StatusAdvance { status: Sent, implied: &[] }));
        assert_eq!(decide_advance(Sent, Failed), Some(StatusAdvance { status: Failed, implied: &[] }));
        assert_eq!(decide_advance(Read, Delivered), None);
        assert_eq!(decide_advance(Delivered, Failed), None);
        assert_eq!(decide_advance(Failed, Read), None);
    }

    #[test]
    fn the_move_emits_the_status_update() {
        let message = super::Message {
            id: super::MessageId(1),
            channel_id: crate::channels::ChannelId(2),
            thread_id: super::ThreadId(3),
            direction: super::Direction::Outbound,
            content: "hi".into(),
            status: Delivered,
            created_at: time::OffsetDateTime::UNIX_EPOCH,
            sender: super::Sender::ApiKey(None),
        };
        let advance = decide_advance(Sent, Delivered).expect("forward");
        assert_eq!(advance.event(message).event_type(), crate::webhooks::EventType::MessageStatusUpdated);
    }

    #[test]
    fn statuses_only_move_forward() {
        assert!(Queued.can_advance_to(Sent) && Sent.can_advance_to(Delivered) && Delivered.can_advance_to(Read));
        assert!(Queued.can_advance_to(Read), "a read receipt may arrive first");
        assert!(!Read.can_advance_to(Delivered) && !Delivered.can_advance_to(Sent) && !Read.can_advance_to(Read));
    }

    #[test]
    fn failure_only_before_delivery_and_is_final() {
        assert!(Sent.can_advance_to(Failed) && Queued.can_advance_to(Failed));
        assert!(!Delivered.can_advance_to(Failed) && !Read.can_advance_to(Failed));
        for s in MessageStatus::ALL {
            assert!(!Failed.can_advance_to(s));
        }
    }
}

#[cfg(test)]
mod funnel_tests {
    use super::*;

    #[test]
    fn a_message_counts_in_every_stage_up_to_the_one_it_reached() {
        use FunnelStage::{Delivered, Read, Sent};
        let reached = |s: MessageStatus| FunnelStage::ALL.into_iter().filter(|&f| s.reached(f)).collect::<Vec<_>>();
        assert_eq!(reached(MessageStatus::Queued), []);
        assert_eq!(reached(MessageStatus::Failed), []);
        assert_eq!(reached(MessageStatus::Sent), [Sent]);
        assert_eq!(reached(MessageStatus::Delivered), [Sent, Delivered]);
        assert_eq!(reached(MessageStatus::Read), [Sent, Delivered, Read]);
    }
}
