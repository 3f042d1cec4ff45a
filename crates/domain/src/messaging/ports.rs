//! Storage port for messages.

use async_trait::async_trait;

use super::model::{Message, MessageFilter, MessageId, ThreadId};
use super::record::MessageRecord;
use crate::channels::ChannelId;
use crate::common::error::RepoError;
use crate::common::page::{Page, PageRequest};
use crate::webhooks::DomainEvent;
use crate::workspace::WorkspaceId;

/// Who receives an outbound message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recipient {
    /// The contact of this thread (already checked to be on the message's channel).
    Thread(ThreadId),
    /// A phone number (E.164, WhatsApp) or platform user id: its contact and thread on the
    /// channel are found or created.
    Address(String),
}

/// A validated outbound message, ready to store as `queued`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOutboundMessage {
    /// The channel.
    pub channel_id: ChannelId,
    /// Who receives it.
    pub recipient: Recipient,
    /// 1..=4096 characters.
    pub content: String,
    /// A WhatsApp template to send instead of free text (`content` is then its preview).
    pub template: Option<crate::connectors::Template>,
    /// Who sends it.
    pub sender: crate::messaging::Sender,
    /// `Idempotency-Key` and the fingerprint of the request it was first used with.
    pub idempotency: Option<IdempotencyKey>,
    /// What the send needs of the recipient's service window: the adapter asks
    /// [`super::window::admit`] with the thread it resolves for an [`Recipient::Address`] before
    /// creating anything (a thread recipient was admitted by the service).
    pub need: super::window::WindowNeed,
    /// The Meta message tag it goes out with (`HUMAN_AGENT`).
    pub tag: Option<super::window::MessageTag>,
    /// When the send was asked for (the window is judged at this time).
    pub at: time::OffsetDateTime,
}

impl NewOutboundMessage {
    /// The analytics' kind of the message, stored with it: `template` for a template send, `ai`
    /// for an AI agent's free text, `human` for anyone else's (a member's or an integration's).
    pub fn analytics_kind(&self) -> &'static str {
        match self.sender {
            _ if self.template.is_some() => "template",
            crate::messaging::Sender::AiAgent(_) => "ai",
            _ => "human",
        }
    }

    /// `message.created`, once it is stored, with the stored message's record.
    pub fn event(&self, message: MessageRecord) -> DomainEvent {
        DomainEvent::MessageCreated(message)
    }
}

/// An idempotency key and the SHA-256 fingerprint of the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey {
    /// The client's key (1..=255 visible ASCII characters).
    pub key: String,
    /// Fingerprint of the request body.
    pub fingerprint: [u8; 32],
}

/// An earlier use of an idempotency key, as stored: its request's fingerprint, and its message
/// once stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlierUse {
    /// Fingerprint of the earlier request's body.
    pub fingerprint: Vec<u8>,
    /// The message it stored; `None` while that request is in flight.
    pub message_id: Option<MessageId>,
}

impl IdempotencyKey {
    /// How long a key answers for its first request: an older use is forgotten, so the key is
    /// free again.
    pub const LIFETIME: time::Duration = time::Duration::hours(24);

    /// The uses of a key made at or before this time are forgotten at `now`.
    pub fn forgotten_at_or_before(now: time::OffsetDateTime) -> time::OffsetDateTime {
        now - Self::LIFETIME
    }

    /// The message a request with this key is answered with before anything is sent, given the
    /// key's earlier use: the message stored for the same request; `None` when the key is unused
    /// or its first request is still in flight (the insert settles those).
    ///
    /// # Errors
    /// [`InsertMessageError::IdempotencyMismatch`] when the key stored a message for another
    /// request.
    pub fn replay_of(&self, earlier: Option<&EarlierUse>) -> Result<Option<MessageId>, InsertMessageError> {
        match earlier {
            None | Some(EarlierUse { message_id: None, .. }) => Ok(None),
            Some(e) if e.fingerprint != self.fingerprint => Err(InsertMessageError::IdempotencyMismatch),
            Some(EarlierUse { message_id, .. }) => Ok(*message_id),
        }
    }

    /// The message a send is answered with when storing it finds its key already held by an
    /// earlier request: the message stored for the same request; `None` when the earlier use
    /// names no message to answer with (nothing a committed request leaves: the caller's storage
    /// is inconsistent). Unlike [`Self::replay_of`], a different request is refused even while
    /// the earlier one has stored no message yet: a key answers one request only.
    ///
    /// # Errors
    /// [`InsertMessageError::IdempotencyMismatch`] when the key was used with another request,
    /// stored or in flight.
    pub fn reuse_of(&self, earlier: Option<&EarlierUse>) -> Result<Option<MessageId>, InsertMessageError> {
        match earlier {
            Some(e) if e.fingerprint != self.fingerprint => Err(InsertMessageError::IdempotencyMismatch),
            Some(EarlierUse { message_id, .. }) => Ok(*message_id),
            None => Ok(None),
        }
    }
}

/// The stored message and whether it is a replay of an earlier request with the same key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// The message.
    pub message: Message,
    /// `true` when nothing new was stored.
    pub replayed: bool,
}

/// A thread as far as sending needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadRef {
    /// Its id.
    pub id: ThreadId,
    /// Its channel.
    pub channel_id: ChannelId,
    /// The platform time of the contact's latest inbound message on it (its service window).
    pub latest_inbound_at: Option<time::OffsetDateTime>,
    /// Whether its contact was erased: nobody is left to send to.
    pub contact_erased: bool,
}

impl ThreadRef {
    /// Whether a send may address the thread: not once its contact is erased. Decided when the
    /// send reads the thread, and again in the send's transaction with the contact's row locked
    /// (`contact_erased` read under the lock), where an erasure that committed in between refuses
    /// the send instead of leaving its text in the erased person's thread.
    ///
    /// # Errors
    /// [`InsertMessageError::ContactErased`].
    pub fn addressable(thread: ThreadId, contact_erased: bool) -> Result<(), InsertMessageError> {
        if contact_erased {
            Err(InsertMessageError::ContactErased(thread))
        } else {
            Ok(())
        }
    }
}

/// Why a message could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum InsertMessageError {
    /// The idempotency key was used before with a different request.
    #[error("the Idempotency-Key was already used with a different request")]
    IdempotencyMismatch,
    /// The recipient's service window is closed for this send: nothing was stored.
    #[error(transparent)]
    WindowClosed(#[from] super::window::WindowClosed),
    /// The thread's contact was erased after the send read the thread ([`ThreadRef::addressable`],
    /// checked again with the contact locked): nothing was stored.
    #[error("the contact of thread {} was erased", .0.0)]
    ContactErased(ThreadId),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Messages of a workspace. Every method is scoped by the workspace.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait MessageRepository: Send + Sync {
    /// Matching messages, newest first, one page.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn list(&self, ws: WorkspaceId, filter: MessageFilter, page: PageRequest)
        -> Result<Page<Message>, RepoError>;

    /// One message.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn find(&self, ws: WorkspaceId, id: MessageId) -> Result<Option<Message>, RepoError>;

    /// One thread.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn find_thread(&self, ws: WorkspaceId, id: ThreadId) -> Result<Option<ThreadRef>, RepoError>;

    /// The message stored earlier under this idempotency key with this fingerprint, if any.
    ///
    /// # Errors
    /// [`InsertMessageError::IdempotencyMismatch`] when the key was used with another request.
    async fn replay(&self, ws: WorkspaceId, key: &IdempotencyKey) -> Result<Option<Message>, InsertMessageError>;

    /// How `sender` stands in `ws` (a member or an AI agent of it, active or not, or unknown):
    /// [`crate::messaging::admit_sender`] decides whether a key may send on its behalf.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn sender_standing(
        &self,
        ws: WorkspaceId,
        sender: crate::messaging::Sender,
    ) -> Result<crate::messaging::SenderStanding, RepoError>;

    /// Stores a `queued` outbound message in one transaction: the contact and thread when new
    /// (with `contact.created` / `thread.created`), the message (`message.created`), the thread's
    /// last activity and the idempotency record. A concurrent request with the same key gets the
    /// first one's message.
    ///
    /// # Errors
    /// [`InsertMessageError::IdempotencyMismatch`] when the key was used with another request.
    async fn insert_outbound(&self, ws: WorkspaceId, new: &NewOutboundMessage) -> Result<Stored, InsertMessageError>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messaging::Sender;

    #[test]
    fn an_idempotency_key_is_forgotten_a_day_after_its_use() {
        let now = time::macros::datetime!(2026-03-02 10:00 UTC);
        assert_eq!(IdempotencyKey::forgotten_at_or_before(now), time::macros::datetime!(2026-03-01 10:00 UTC));
    }

    fn message(sender: Sender, template: bool) -> NewOutboundMessage {
        NewOutboundMessage {
            channel_id: ChannelId(1),
            recipient: Recipient::Address("+14155550123".into()),
            content: "Hi".into(),
            template: template.then(|| crate::connectors::Template {
                name: "order_update".into(),
                language: "en_US".into(),
                parameters: vec![],
            }),
            sender,
            idempotency: None,
            need: super::super::window::WindowNeed::FreeText,
            tag: None,
            at: time::macros::datetime!(2026-11-27 12:00 UTC),
        }
    }

    #[test]
    fn a_template_send_is_a_template_an_agents_text_is_ai_anyone_elses_is_human() {
        assert_eq!(message(Sender::AiAgent(3), true).analytics_kind(), "template");
        assert_eq!(message(Sender::User(2), true).analytics_kind(), "template");
        assert_eq!(message(Sender::AiAgent(3), false).analytics_kind(), "ai");
        assert_eq!(message(Sender::User(2), false).analytics_kind(), "human");
        assert_eq!(message(Sender::ApiKey(Some(9)), false).analytics_kind(), "human");
    }

    fn used(fingerprint: [u8; 32], message_id: Option<i64>) -> EarlierUse {
        EarlierUse { fingerprint: fingerprint.to_vec(), message_id: message_id.map(MessageId) }
    }

    #[test]
    fn a_key_replays_only_the_message_it_stored_for_the_same_request() {
        let key = IdempotencyKey { key: "k".into(), fingerprint: [7; 32] };
        assert_eq!(key.replay_of(None).ok(), Some(None));
        assert_eq!(key.replay_of(Some(&used([7; 32], None))).ok(), Some(None), "in flight");
        assert_eq!(key.replay_of(Some(&used([8; 32], None))).ok(), Some(None), "in flight: the insert decides");
        assert_eq!(key.replay_of(Some(&used([7; 32], Some(5)))).ok(), Some(Some(MessageId(5))));
        assert!(matches!(key.replay_of(Some(&used([8; 32], Some(5)))), Err(InsertMessageError::IdempotencyMismatch)));
    }

    #[test]
    fn a_held_key_answers_its_own_request_and_refuses_another_even_in_flight() {
        let key = IdempotencyKey { key: "k".into(), fingerprint: [7; 32] };
        assert_eq!(key.reuse_of(Some(&used([7; 32], Some(5)))).ok(), Some(Some(MessageId(5))));
        assert!(matches!(key.reuse_of(Some(&used([8; 32], Some(5)))), Err(InsertMessageError::IdempotencyMismatch)));
        assert!(
            matches!(key.reuse_of(Some(&used([8; 32], None))), Err(InsertMessageError::IdempotencyMismatch)),
            "in flight with another request"
        );
        assert_eq!(key.reuse_of(Some(&used([7; 32], None))).ok(), Some(None), "nothing to answer with");
        assert_eq!(key.reuse_of(None).ok(), Some(None), "the key vanished");
    }
}
