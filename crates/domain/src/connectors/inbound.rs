//! The decision on one inbound platform message: whether it is new, which contact it comes from
//! (created, or touched and perhaps named), which thread it goes to (created, or bumped and
//! perhaps reopened), and the events each step emits. The storage adapter reads the facts, asks
//! [`plan_inbound`], and executes the plan in one transaction.

use time::OffsetDateTime;

use super::InboundMessage;
use crate::channels::ChannelType;
use crate::contacts::Contact;
use crate::messaging::window::latest_inbound;
use crate::messaging::MessageRecord;
use crate::reports::ConversationEvent;
use crate::threads::ThreadRecord;
use crate::threads::{decide_contact_reply, StatusChange, StatusFacts, ThreadStatus};
use crate::webhooks::DomainEvent;

/// A contact the adapter found for the sender's address (its row locked until commit, which
/// serialises concurrent messages of one sender).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownContact {
    /// Its id.
    pub id: i64,
    /// Its name, when known.
    pub name: Option<String>,
}

/// The sender's latest thread on the channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownThread {
    /// Its id.
    pub id: i64,
    /// Its status.
    pub status: ThreadStatus,
    /// The platform time of the contact's latest inbound message on it, if any.
    pub latest_inbound_at: Option<OffsetDateTime>,
}

/// What the adapter read before the decision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InboundFacts {
    /// A message with the same platform message id is already stored for the channel.
    pub duplicate: bool,
    /// The contact with the sender's address, if any.
    pub contact: Option<KnownContact>,
    /// The known contact's latest thread on the channel, if any.
    pub thread: Option<KnownThread>,
    /// When wms received the message: a platform time later than this is taken as this (a
    /// sender's clock ahead of ours never dates a message in the future).
    pub received_at: Option<OffsetDateTime>,
}

/// Which contact column identifies a sender on a platform, and so the recipient of a send on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SenderAddress {
    /// `contacts.phone` (WhatsApp: the sender is an E.164 number).
    Phone,
    /// `contacts.platform_user_id` (Messenger, Instagram).
    PlatformUserId,
}

impl SenderAddress {
    /// The address column of senders on `channel_type`.
    pub fn of(channel_type: ChannelType) -> Self {
        match channel_type {
            ChannelType::Whatsapp => Self::Phone,
            ChannelType::Messenger | ChannelType::Instagram => Self::PlatformUserId,
        }
    }

    /// Of a contact's phone and platform user id, the one this column holds.
    pub fn pick<T>(self, phone: T, platform_user_id: T) -> T {
        match self {
            Self::Phone => phone,
            Self::PlatformUserId => platform_user_id,
        }
    }

    /// The column name.
    pub fn column(self) -> &'static str {
        match self {
            Self::Phone => "phone",
            Self::PlatformUserId => "platform_user_id",
        }
    }
}

/// What happens to the sender's contact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContactStep {
    /// A new contact with the address, the platform's name and both contact times at the message.
    Create {
        /// Which column holds `address`.
        column: SenderAddress,
        /// The sender's address.
        address: String,
        /// The platform's profile name.
        name: Option<String>,
        /// First and last contact time.
        at: OffsetDateTime,
    },
    /// A known contact: last contact time set, first contact time and name filled when missing.
    Touch {
        /// The contact.
        id: i64,
        /// The name to fill in when the contact has none.
        name: Option<String>,
        /// The message time.
        at: OffsetDateTime,
        /// The name is learned now (the contact had none): `contact.updated` is emitted.
        learns_name: bool,
    },
}

impl ContactStep {
    /// The event recorded after the step, made of the contact's record as the step left it.
    pub fn event(&self) -> Option<fn(Contact) -> DomainEvent> {
        match self {
            Self::Create { .. } => Some(DomainEvent::ContactCreated),
            Self::Touch { learns_name: true, .. } => Some(DomainEvent::ContactUpdated),
            Self::Touch { .. } => None,
        }
    }
}

/// What happens to the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThreadStep {
    /// A new thread of the contact on the channel, one unread message.
    Create {
        /// Its last message time.
        at: OffsetDateTime,
    },
    /// The latest thread: one more unread, last message time moved forward (never back), its
    /// service window set from the latest inbound platform time.
    Bump {
        /// The thread.
        id: i64,
        /// The message time.
        at: OffsetDateTime,
        /// The thread's latest inbound platform time once the message is stored (a late callback
        /// with an older timestamp keeps the later one).
        latest_inbound_at: OffsetDateTime,
        /// The thread was pending, snoozed or resolved: the change that opens it again
        /// ([`decide_contact_reply`]: `status_reason` `contact_replied`, `thread.status_changed`).
        reopen: Option<StatusChange>,
        /// It was snoozed or resolved, so reopening adds to its member's load: the adapter checks
        /// the member's capacity ([`crate::teams::decide_reopen_capacity`]).
        adds_load: bool,
    },
}

impl ThreadStep {
    /// The event recorded after the step, made of the thread's record as the step left it.
    pub fn event(&self) -> Option<fn(ThreadRecord) -> DomainEvent> {
        match self {
            Self::Create { .. } => Some(DomainEvent::ThreadCreated),
            Self::Bump { reopen: Some(_), .. } => Some(DomainEvent::ThreadStatusChanged),
            Self::Bump { .. } => None,
        }
    }
}

/// The inbound message to store: delivered at its time, from the contact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewInboundMessage {
    /// The platform's id (unique per channel).
    pub platform_message_id: String,
    /// The text.
    pub content: String,
    /// Creation and delivery time.
    pub at: OffsetDateTime,
}

impl NewInboundMessage {
    /// The event recorded once it is stored, with the stored message's record.
    pub fn event(&self, message: MessageRecord) -> DomainEvent {
        DomainEvent::MessageCreated(message)
    }
}

/// What to write for one inbound message, in order: contact, thread, message, each followed by
/// its event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundPlan {
    /// The sender's contact.
    pub contact: ContactStep,
    /// The conversation.
    pub thread: ThreadStep,
    /// The message.
    pub message: NewInboundMessage,
    /// The thread was resolved: the message starts a new cycle of the conversation reports.
    pub follows_resolution: bool,
}

impl InboundPlan {
    /// What the message, stored with `created_at`, adds to the conversation reports.
    pub fn report(&self, created_at: OffsetDateTime) -> ConversationEvent {
        ConversationEvent::Inbound { at: created_at, was_resolved: self.follows_resolution }
    }
}

/// Decides what an inbound message changes. `None` for a platform message id already stored (a
/// redelivered callback): nothing is written, nothing emitted.
pub fn plan_inbound(channel_type: ChannelType, m: &InboundMessage, facts: &InboundFacts) -> Option<InboundPlan> {
    if facts.duplicate {
        return None;
    }
    let at = facts.received_at.map_or(m.at, |received| m.at.min(received));
    let m = &InboundMessage { at, ..m.clone() };
    let contact = match &facts.contact {
        Some(c) => ContactStep::Touch {
            id: c.id,
            name: m.name.clone(),
            at: m.at,
            learns_name: c.name.is_none() && m.name.is_some(),
        },
        None => ContactStep::Create {
            column: SenderAddress::of(channel_type),
            address: m.from.clone(),
            name: m.name.clone(),
            at: m.at,
        },
    };
    // A new contact has no thread yet, whatever the adapter passed.
    let (thread, was_resolved) = match (&facts.contact, &facts.thread) {
        (Some(_), Some(t)) => {
            let reopen = decide_contact_reply(StatusFacts { status: t.status, snoozed_until: None });
            let bump = ThreadStep::Bump {
                id: t.id,
                at: m.at,
                latest_inbound_at: latest_inbound(t.latest_inbound_at, m.at),
                reopen,
                adds_load: reopen.is_some() && !t.status.counts_as_load(),
            };
            (bump, t.status == ThreadStatus::Resolved)
        }
        _ => (ThreadStep::Create { at: m.at }, false),
    };
    let message =
        NewInboundMessage { platform_message_id: m.platform_message_id.clone(), content: m.text.clone(), at: m.at };
    Some(InboundPlan { contact, thread, message, follows_resolution: was_resolved })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhooks::samples::sample_event;
    use crate::webhooks::{DestinationId, EventType};
    use time::macros::datetime;

    impl InboundPlan {
        /// The types of the events the plan emits, in the order they are recorded.
        fn events(&self) -> Vec<EventType> {
            let sample = |e| sample_event(e, DestinationId(1), AT);
            let (
                Some(DomainEvent::ContactCreated(contact)),
                Some(DomainEvent::ThreadCreated(thread)),
                Some(DomainEvent::MessageCreated(message)),
            ) = (
                sample(EventType::ContactCreated),
                sample(EventType::ThreadCreated),
                sample(EventType::MessageCreated),
            )
            else {
                return Vec::new();
            };
            self.contact
                .event()
                .map(|e| e(contact))
                .into_iter()
                .chain(self.thread.event().map(|e| e(thread)))
                .chain([self.message.event(message)])
                .map(|e| e.event_type())
                .collect()
        }
    }

    const AT: OffsetDateTime = datetime!(2026-03-01 10:00:00 UTC);

    fn message(name: Option<&str>) -> InboundMessage {
        InboundMessage {
            platform_message_id: "wamid.1".into(),
            from: "+14155550123".into(),
            name: name.map(Into::into),
            text: "hello".into(),
            at: AT,
        }
    }

    fn known(name: Option<&str>, thread: Option<&str>) -> InboundFacts {
        InboundFacts {
            duplicate: false,
            contact: Some(KnownContact { id: 7, name: name.map(Into::into) }),
            thread: thread.map(|status| KnownThread {
                id: 70,
                status: ThreadStatus::stored(status),
                latest_inbound_at: None,
            }),
            received_at: None,
        }
    }

    #[test]
    fn a_whatsapp_contact_is_reached_by_phone_and_others_by_platform_user_id() {
        let wa = SenderAddress::of(ChannelType::Whatsapp);
        assert_eq!(wa.pick("+14155550123", "psid"), "+14155550123");
        for other in [ChannelType::Messenger, ChannelType::Instagram] {
            assert_eq!(SenderAddress::of(other).pick("+14155550123", "psid"), "psid");
        }
    }

    #[test]
    fn a_new_sender_becomes_a_contact_with_a_new_thread() {
        let plan = plan_inbound(ChannelType::Whatsapp, &message(Some("Ana")), &InboundFacts::default())
            .expect("a new message");
        assert_eq!(
            plan.contact,
            ContactStep::Create {
                column: SenderAddress::Phone,
                address: "+14155550123".into(),
                name: Some("Ana".into()),
                at: AT
            }
        );
        assert_eq!(plan.thread, ThreadStep::Create { at: AT });
        assert_eq!(
            plan.message,
            NewInboundMessage { platform_message_id: "wamid.1".into(), content: "hello".into(), at: AT }
        );
        assert_eq!(plan.events(), [EventType::ContactCreated, EventType::ThreadCreated, EventType::MessageCreated]);
    }

    #[test]
    fn a_new_sender_on_messenger_is_matched_by_platform_user_id() {
        let plan =
            plan_inbound(ChannelType::Messenger, &message(None), &InboundFacts::default()).expect("a new message");
        assert!(matches!(plan.contact, ContactStep::Create { column: SenderAddress::PlatformUserId, .. }));
    }

    #[test]
    fn a_known_contact_is_touched_and_its_open_thread_bumped_without_events() {
        let plan = plan_inbound(ChannelType::Whatsapp, &message(Some("Ana")), &known(Some("Ana B."), Some("open")))
            .expect("a new message");
        assert_eq!(plan.contact, ContactStep::Touch { id: 7, name: Some("Ana".into()), at: AT, learns_name: false });
        assert_eq!(
            plan.thread,
            ThreadStep::Bump { id: 70, at: AT, latest_inbound_at: AT, reopen: None, adds_load: false }
        );
        assert_eq!(plan.events(), [EventType::MessageCreated]);
        assert_eq!(plan.report(AT), ConversationEvent::Inbound { at: AT, was_resolved: false });
    }

    #[test]
    fn a_known_contact_without_a_name_learns_it_with_contact_updated() {
        let plan = plan_inbound(ChannelType::Whatsapp, &message(Some("Ana")), &known(None, Some("open")))
            .expect("a new message");
        assert!(matches!(plan.contact, ContactStep::Touch { learns_name: true, .. }));
        assert_eq!(plan.events(), [EventType::ContactUpdated, EventType::MessageCreated]);
    }

    #[test]
    fn a_message_without_a_name_teaches_none() {
        let plan =
            plan_inbound(ChannelType::Whatsapp, &message(None), &known(None, Some("open"))).expect("a new message");
        assert!(matches!(plan.contact, ContactStep::Touch { learns_name: false, .. }));
    }

    #[test]
    fn a_known_contact_without_a_thread_on_the_channel_gets_one() {
        let plan =
            plan_inbound(ChannelType::Whatsapp, &message(None), &known(Some("Ana"), None)).expect("a new message");
        assert_eq!(plan.thread, ThreadStep::Create { at: AT });
        assert_eq!(plan.events(), [EventType::ThreadCreated, EventType::MessageCreated]);
    }

    #[test]
    fn a_duplicate_platform_message_id_writes_and_emits_nothing() {
        let facts = InboundFacts { duplicate: true, ..known(Some("Ana"), Some("resolved")) };
        assert_eq!(plan_inbound(ChannelType::Whatsapp, &message(Some("Ana")), &facts), None);
    }

    #[test]
    fn a_message_reopens_a_resolved_thread_with_status_changed() {
        let plan = plan_inbound(ChannelType::Whatsapp, &message(None), &known(Some("Ana"), Some("resolved")))
            .expect("a new message");
        assert_eq!(
            plan.thread,
            ThreadStep::Bump {
                id: 70,
                at: AT,
                latest_inbound_at: AT,
                reopen: Some(StatusChange {
                    status: ThreadStatus::Open,
                    snoozed_until: None,
                    reason: crate::threads::StatusReason::ContactReplied,
                }),
                adds_load: true
            }
        );
        assert_eq!(plan.events(), [EventType::ThreadStatusChanged, EventType::MessageCreated]);
        assert_eq!(plan.report(AT), ConversationEvent::Inbound { at: AT, was_resolved: true }, "a new cycle starts");
    }

    #[test]
    fn a_late_message_keeps_the_threads_later_inbound_time() {
        let later = AT + time::Duration::hours(2);
        let mut facts = known(Some("Ana"), Some("open"));
        if let Some(t) = facts.thread.as_mut() {
            t.latest_inbound_at = Some(later);
        }
        let plan = plan_inbound(ChannelType::Whatsapp, &message(None), &facts).expect("a new message");
        assert!(matches!(plan.thread, ThreadStep::Bump { latest_inbound_at, .. } if latest_inbound_at == later));
    }

    #[test]
    fn a_message_reopens_pending_and_snoozed_threads_and_leaves_open_ones() {
        for (status, reopens, adds_load) in [("pending", true, false), ("snoozed", true, true), ("open", false, false)]
        {
            let plan = plan_inbound(ChannelType::Whatsapp, &message(None), &known(Some("Ana"), Some(status)))
                .expect("a new message");
            let ThreadStep::Bump { reopen, adds_load: added, .. } = plan.thread else { panic!("{status}: a bump") };
            assert_eq!((reopen.is_some(), added), (reopens, adds_load), "{status}");
            assert_eq!(
                reopen.map(|c| (c.status, c.reason.as_str())),
                reopens.then_some((ThreadStatus::Open, "contact_replied"))
            );
            assert_eq!(plan.report(AT), ConversationEvent::Inbound { at: AT, was_resolved: false }, "{status}");
        }
    }

    #[test]
    fn a_platform_time_after_receipt_is_taken_as_the_receipt() {
        let received = AT - time::Duration::seconds(5);
        let facts = InboundFacts { received_at: Some(received), ..InboundFacts::default() };
        let plan = plan_inbound(ChannelType::Whatsapp, &message(None), &facts).expect("a new message");
        assert_eq!((plan.message.at, plan.thread), (received, ThreadStep::Create { at: received }));
        let facts = InboundFacts { received_at: Some(AT + time::Duration::HOUR), ..InboundFacts::default() };
        let plan = plan_inbound(ChannelType::Whatsapp, &message(None), &facts).expect("a new message");
        assert_eq!(plan.message.at, AT, "an earlier platform time is kept");
    }
}
