//! The messages use cases: sending (the rules of `POST /v1/messages`), reading and listing.

use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::model::{Message, MessageFilter, MessageId, Sender, ThreadId};
use super::ports::{
    IdempotencyKey, InsertMessageError, MessageRepository, NewOutboundMessage, Recipient, Stored, ThreadRef,
};
use super::window::{admit, MessageTag, WindowClosed, WindowNeed};
use crate::access::Actor;
use crate::channels::{ChannelId, ChannelRepository, ChannelStatus, ChannelType};
use crate::common::error::{FieldError, RepoError, ValidationErrors};
use crate::common::page::{Page, PageRequest};
use crate::common::ports::Clock;
use crate::connectors::templates::{check_template_send, TemplateRefusal, TemplateStatus, TemplateStore};
use crate::users::UserId;
use crate::workspace::WorkspaceId;

/// Largest message, in characters.
pub const MAX_CONTENT_CHARS: usize = 4096;

/// The request as the client sent it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SendInput {
    /// Channel to send through.
    pub channel_id: i64,
    /// Text, 1..=4096 characters; empty with a template: the template's body with its
    /// parameters filled in ([`crate::connectors::templates::WhatsappTemplate::filled`]).
    pub content: String,
    /// Reply in this thread (its contact is the recipient).
    pub thread_id: Option<i64>,
    /// Phone number (WhatsApp, E.164) or platform user id (Messenger, Instagram).
    pub to: Option<String>,
    /// A WhatsApp template (outside the 24-hour customer-service window only templates are delivered).
    pub template: Option<crate::connectors::Template>,
    /// On whose behalf an API key sends: `("user" | "ai_agent", id)`.
    pub sender: Option<(String, i64)>,
    /// A Meta message tag (`human_agent`, Messenger and Instagram only).
    pub tag: Option<String>,
}

/// Who asks to send: a member (user token, settings session) or an API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendAs {
    /// A member sends as themselves.
    Member(UserId),
    /// A key, by id; it may name a member or AI agent to send for (`SendInput::sender`).
    ApiKey(i64),
}

impl SendAs {
    /// Who `actor` sends as: a key as itself, a member (directly or through an app) as
    /// themselves; the command line sends nothing.
    pub fn of(actor: Actor) -> Option<Self> {
        match actor {
            Actor::ApiKey { key_id, .. } => Some(SendAs::ApiKey(key_id)),
            Actor::Member { user_id, .. } | Actor::App { user_id, .. } => Some(SendAs::Member(user_id)),
            Actor::Operator => None,
        }
    }
}

/// The sender of a send: a member's is theirs; a key's is the key's unless the body names an
/// active member or AI agent (checked against storage afterwards).
///
/// # Errors
/// A [`FieldError`] on `sender`.
pub fn decide_sender(by: SendAs, named: Option<(&str, i64)>) -> Result<Sender, FieldError> {
    match (by, named) {
        (SendAs::Member(u), None) => Ok(Sender::User(u.0)),
        (SendAs::Member(u), Some(("user", id))) if id == u.0 => Ok(Sender::User(u.0)),
        (SendAs::Member(_), Some(_)) => {
            Err(FieldError::new("sender", "a member sends as themselves; only API keys send on behalf of others"))
        }
        (SendAs::ApiKey(key), None) => Ok(Sender::ApiKey(Some(key))),
        (SendAs::ApiKey(_), Some(("user", id))) => Ok(Sender::User(id)),
        (SendAs::ApiKey(_), Some(("ai_agent", id))) => Ok(Sender::AiAgent(id)),
        (SendAs::ApiKey(_), Some(_)) => Err(FieldError::new("sender", "`type` must be `user` or `ai_agent`")),
    }
}

/// What the workspace knows of a sender a key names, loaded by its kind and id: the facts
/// [`admit_sender`] decides on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SenderStanding {
    /// A member of the workspace, active or not.
    Member {
        /// Whether the membership is active.
        active: bool,
    },
    /// An AI agent of the workspace.
    AiAgent {
        /// Whether the agent's status is `active`.
        active: bool,
    },
    /// Nothing of the workspace has that kind and id (contacts and keys are never named).
    Unknown,
}

impl SenderStanding {
    /// An AI agent whose stored status is `status` (only `active` agents send).
    pub fn agent(status: &str) -> Self {
        Self::AiAgent { active: status == "active" }
    }
}

/// Whether a key may send on behalf of `sender`, standing as `standing` in the workspace: an
/// active member or an active AI agent; anything else is refused naming `sender` (the same answer
/// whether it exists elsewhere, is inactive or never was).
///
/// # Errors
/// A [`FieldError`] on `sender`.
pub fn admit_sender(sender: Sender, standing: SenderStanding) -> Result<(), FieldError> {
    match standing {
        SenderStanding::Member { active: true } | SenderStanding::AiAgent { active: true } => Ok(()),
        SenderStanding::Member { active: false }
        | SenderStanding::AiAgent { active: false }
        | SenderStanding::Unknown => Err(FieldError::new(
            "sender",
            format!("no active {} {} in this workspace", sender.kind(), sender.id().unwrap_or(0)),
        )),
    }
}

/// Why a message was not sent.
#[derive(Debug, thiserror::Error)]
pub enum SendMessageError {
    /// Invalid fields.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// No such channel in the workspace.
    #[error("channel {0} not found")]
    ChannelNotFound(i64),
    /// No such thread in the workspace.
    #[error("thread {0} not found")]
    ThreadNotFound(i64),
    /// The channel is not connected.
    #[error("channel {id} is {status}; only active channels can send")]
    ChannelNotActive {
        /// The channel.
        id: i64,
        /// Its status.
        status: &'static str,
    },
    /// The idempotency key was used with another request.
    #[error("the Idempotency-Key was already used with a different request")]
    IdempotencyMismatch,
    /// The recipient's service window is closed for this send (422 `service_window_closed`).
    #[error(transparent)]
    WindowClosed(#[from] WindowClosed),
    /// The template is in the channel's catalogue but not approved (422 `template_not_approved`).
    #[error("template {name} ({language}) is {}; only approved templates can be sent", .status.as_str())]
    TemplateNotApproved {
        /// Its name.
        name: String,
        /// Its language.
        language: String,
        /// Its status.
        status: TemplateStatus,
    },
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

impl From<TemplateRefusal> for SendMessageError {
    fn from(e: TemplateRefusal) -> Self {
        match e {
            TemplateRefusal::Invalid(v) => SendMessageError::Invalid(v),
            TemplateRefusal::NotApproved { name, language, status } => {
                SendMessageError::TemplateNotApproved { name, language, status }
            }
        }
    }
}

impl From<InsertMessageError> for SendMessageError {
    fn from(e: InsertMessageError) -> Self {
        match e {
            InsertMessageError::IdempotencyMismatch => SendMessageError::IdempotencyMismatch,
            InsertMessageError::WindowClosed(c) => SendMessageError::WindowClosed(c),
            InsertMessageError::ContactErased(t) => erased_contact(t).into(),
            InsertMessageError::Unknown(e) => SendMessageError::Unknown(e),
        }
    }
}

/// Why a message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GetMessageError {
    /// Not a message of this workspace.
    #[error("message {0} not found")]
    NotFound(i64),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// The messages use cases, over the channels they go through and the messages' storage.
#[derive(Clone)]
pub struct MessagingService {
    channels: Arc<dyn ChannelRepository>,
    messages: Arc<dyn MessageRepository>,
    templates: Arc<dyn TemplateStore>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for MessagingService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessagingService").finish_non_exhaustive()
    }
}

impl MessagingService {
    /// The service over its ports.
    pub fn new(
        channels: Arc<dyn ChannelRepository>,
        messages: Arc<dyn MessageRepository>,
        templates: Arc<dyn TemplateStore>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self { channels, messages, templates, clock }
    }

    /// A page of the workspace's messages matching `filter`.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn list(
        &self,
        ws: WorkspaceId,
        filter: MessageFilter,
        page: PageRequest,
    ) -> Result<Page<Message>, RepoError> {
        self.messages.list(ws, filter, page).await
    }

    /// One message of the workspace.
    ///
    /// # Errors
    /// [`GetMessageError`].
    pub async fn get(&self, ws: WorkspaceId, id: MessageId) -> Result<Message, GetMessageError> {
        self.messages.find(ws, id).await?.ok_or(GetMessageError::NotFound(id.0))
    }

    /// Validates and stores an outbound message as `queued`; with an idempotency key, a retry of
    /// the same request returns the first result instead of sending twice. Free text goes out only
    /// within the recipient's service window (a `human_agent` tag stretches it to 7 days on
    /// Messenger and Instagram); a WhatsApp template only when the channel's catalogue has it
    /// approved with that many parameters. A refused send stores nothing.
    ///
    /// # Errors
    /// See [`SendMessageError`].
    pub async fn send(
        &self,
        ws: WorkspaceId,
        input: SendInput,
        by: SendAs,
        idempotency_key: Option<&str>,
    ) -> Result<Stored, SendMessageError> {
        let (channels, messages) = (self.channels.as_ref(), self.messages.as_ref());
        let mut errors = ValidationErrors::default();
        let content_chars = input.content.chars().count();
        if input.content.trim().is_empty() && input.template.is_none() {
            errors.0.push(FieldError::new("content", "must not be empty (it may be left out only with a template)"));
        } else if content_chars > MAX_CONTENT_CHARS {
            errors.0.push(FieldError::new("content", format!("must have at most {MAX_CONTENT_CHARS} characters")));
        }
        let idempotency = match idempotency_key {
            Some(k) if (1..=255).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_graphic()) => {
                Some(IdempotencyKey { key: k.to_owned(), fingerprint: fingerprint(&input) })
            }
            Some(_) => {
                errors.0.push(FieldError::new("Idempotency-Key", "must be 1 to 255 visible ASCII characters"));
                None
            }
            None => None,
        };
        let template = match input.template.clone().map(crate::connectors::Template::validate) {
            Some(Ok(t)) => Some(t),
            Some(Err(e)) => {
                errors.0.extend(e.0);
                None
            }
            None => None,
        };
        if input.thread_id.is_none() && input.to.is_none() {
            errors.0.push(FieldError::new(
                "to",
                "is required when thread_id is not given: the recipient's phone number or platform id",
            ));
        }
        let sender = errors.check(decide_sender(by, input.sender.as_ref().map(|(k, id)| (k.as_str(), *id))));
        errors.clone().into_result()?;
        let Some(sender) = sender else { return Err(errors.into()) };
        let on_behalf = matches!(by, SendAs::ApiKey(_)) && matches!(sender, Sender::User(_) | Sender::AiAgent(_));
        if on_behalf {
            admit_sender(sender, messages.sender_standing(ws, sender).await?).map_err(|e| ValidationErrors(vec![e]))?;
        }

        if let Some(key) = &idempotency {
            if let Some(message) = messages.replay(ws, key).await? {
                return Ok(Stored { message, replayed: true });
            }
        }
        let channel = channels
            .find(ws, ChannelId(input.channel_id))
            .await?
            .ok_or(SendMessageError::ChannelNotFound(input.channel_id))?;
        if channel.status != ChannelStatus::Active {
            return Err(SendMessageError::ChannelNotActive { id: input.channel_id, status: channel.status.as_str() });
        }
        if template.is_some() && channel.channel_type != ChannelType::Whatsapp {
            return Err(
                ValidationErrors::one("template", "templates can only be sent through WhatsApp channels").into()
            );
        }
        let tag = match input.tag.as_deref() {
            Some(raw) => Some(MessageTag::parse(raw, channel.channel_type).map_err(|e| ValidationErrors(vec![e]))?),
            None => None,
        };
        let need = match (&template, tag) {
            (Some(_), _) => WindowNeed::Template,
            (None, Some(MessageTag::HumanAgent)) => WindowNeed::HumanAgent,
            (None, None) => WindowNeed::FreeText,
        };
        let mut content = input.content;
        if let Some(t) = &template {
            let entry = self.templates.find(ws, channel.id, &t.name, &t.language).await?;
            check_template_send(t, entry.as_ref())?;
            if content.trim().is_empty() {
                content = entry.map(|e| e.filled(&t.parameters, MAX_CONTENT_CHARS)).unwrap_or_default();
            }
        }
        let at = self.clock.now();
        let recipient = match (input.thread_id, &input.to) {
            (Some(tid), _) => {
                let thread =
                    messages.find_thread(ws, ThreadId(tid)).await?.ok_or(SendMessageError::ThreadNotFound(tid))?;
                ThreadRef::addressable(thread.id, thread.contact_erased)?;
                if thread.channel_id != channel.id {
                    return Err(ValidationErrors::one(
                        "thread_id",
                        format!("thread {tid} is on channel {}, not {}", thread.channel_id, channel.id),
                    )
                    .into());
                }
                admit(need, thread.latest_inbound_at, at)?;
                Recipient::Thread(thread.id)
            }
            (None, Some(to)) => Recipient::Address(address(channel.channel_type, to)?),
            (None, None) => return Err(ValidationErrors::one("to", "is required").into()),
        };
        let new = NewOutboundMessage {
            channel_id: channel.id,
            recipient,
            content,
            template,
            sender,
            idempotency,
            need,
            tag,
            at,
        };
        Ok(messages.insert_outbound(ws, &new).await?)
    }
}

/// The refusal of a send to the thread of an erased contact.
fn erased_contact(thread: ThreadId) -> ValidationErrors {
    ValidationErrors::one(
        "thread_id",
        format!("the contact of thread {} was erased: there is nobody to send to", thread.0),
    )
}

/// The recipient address normalised for the channel's platform.
fn address(channel_type: ChannelType, raw: &str) -> Result<String, ValidationErrors> {
    match channel_type {
        ChannelType::Whatsapp => crate::contacts::E164Phone::new("to", raw).map(|p| p.as_str().to_owned()),
        ChannelType::Messenger | ChannelType::Instagram => {
            let t = raw.trim();
            if !t.is_empty() && t.len() <= 64 && t.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) {
                Ok(t.to_owned())
            } else {
                Err(FieldError::new("to", "must be the recipient's platform user id (letters, digits, `.`, `_`, `-`)"))
            }
        }
    }
    .map_err(|e| ValidationErrors(vec![e]))
}

/// SHA-256 over the request's fields, length-prefixed so no two requests collide by concatenation.
fn fingerprint(input: &SendInput) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(input.channel_id.to_be_bytes());
    for part in [Some(input.content.as_str()), input.to.as_deref()] {
        let s = part.unwrap_or("\u{0}none");
        h.update((s.len() as u64).to_be_bytes());
        h.update(s.as_bytes());
    }
    h.update(input.thread_id.unwrap_or(-1).to_be_bytes());
    let template = input.template.as_ref().and_then(|t| serde_json::to_string(t).ok()).unwrap_or_default();
    h.update((template.len() as u64).to_be_bytes());
    h.update(template.as_bytes());
    // Only when named, so a request without it keeps the fingerprint it had before senders.
    if let Some((kind, id)) = &input.sender {
        h.update((kind.len() as u64).to_be_bytes());
        h.update(kind.as_bytes());
        h.update(id.to_be_bytes());
    }
    if let Some(tag) = &input.tag {
        h.update((tag.len() as u64).to_be_bytes());
        h.update(tag.as_bytes());
    }
    h.finalize().into()
}

/// The message's `Location`.
pub fn location(message: &Message) -> String {
    format!("/v1/messages/{}", message.id.0)
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
