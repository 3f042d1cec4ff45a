//! Erasing a person (GDPR art. 17): what changes is decided here, over the facts the storage loads
//! inside the erasure's transaction, and the storage applies the plan.
//!
//! Only what belongs to this contact is touched, found by ids and never by searching text: its
//! threads' messages, and the stored events whose contact or thread is this contact's (kept beside
//! each event, see [`EventSubjects`](crate::webhooks::EventSubjects)). A phone that is a prefix
//! of another's, or an e-mail inside another, cannot be hit by accident, because no text is
//! matched at all.

use serde_json::{json, Value};

use super::ErasedContact;
use crate::audit::{AuditAction, AuditContext, AuditEntry, AuditTarget};
use crate::messaging::{Direction, MessageId, MessageStatus};
use crate::webhooks::{DomainEvent, EventSubjects, EventType};
use crate::workspace::WorkspaceId;

/// The `failure_reason` of an outbound message that was still queued when its contact was erased.
pub const ERASED_REASON: &str = "erased";

/// A message of one of the contact's threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErasedMessage {
    /// The message.
    pub id: MessageId,
    /// Inbound or outbound.
    pub direction: Direction,
    /// Its status now.
    pub status: MessageStatus,
}

/// A stored event about the contact or one of its threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// The event's row.
    pub id: i64,
    /// Its type (`contact.updated`).
    pub event_type: String,
    /// The envelope as stored (`{"type", "timestamp", "workspace_id", "data"}`).
    pub payload: String,
}

/// Everything the erasure decides on, loaded in its transaction with the contact locked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErasureFacts {
    /// The workspace.
    pub workspace_id: WorkspaceId,
    /// The contact being erased (live, of this workspace).
    pub contact_id: i64,
    /// The contact's threads.
    pub threads: Vec<i64>,
    /// The messages of the contact's threads.
    pub messages: Vec<ErasedMessage>,
    /// The stored events whose contact or thread is the contact's (others, if loaded, are left
    /// as they are).
    pub events: Vec<StoredEvent>,
}

/// What the erasure changes.
#[derive(Debug, Clone, PartialEq)]
pub struct ErasurePlan {
    /// Messages whose content (and template parameters) become empty.
    pub clear_messages: Vec<MessageId>,
    /// Outbound messages still `queued`: they become `failed` with [`ERASED_REASON`], so nothing
    /// is sent to the person afterwards.
    pub cancel_messages: Vec<MessageId>,
    /// Events whose stored payload is replaced (a contact event keeps the id only; a message
    /// event's content becomes `""`), so every delivery or replay sent afterwards carries the
    /// erased data.
    pub scrubbed_events: Vec<(i64, String)>,
    /// Events whose receivers' answers are dropped (they may echo the body).
    pub forget_answers_to: Vec<i64>,
    /// `contact.erased`, with the number of messages cleared and nothing of the person.
    pub audit: AuditEntry,
    /// `contact.deleted`: the id only.
    pub deleted_event: DomainEvent,
}

/// Decides what erasing `facts.contact_id` changes.
pub fn plan_erasure(facts: &ErasureFacts, audit: &AuditContext) -> ErasurePlan {
    let clear_messages: Vec<MessageId> = facts.messages.iter().map(|m| m.id).collect();
    let cancel_messages = facts
        .messages
        .iter()
        .filter(|m| m.direction == Direction::Outbound && m.status == MessageStatus::Queued)
        .map(|m| m.id)
        .collect();
    let mut scrubbed_events = Vec::new();
    let mut forget_answers_to = Vec::new();
    for event in &facts.events {
        if let Some(payload) = scrubbed(event, facts) {
            forget_answers_to.push(event.id);
            if payload != event.payload {
                scrubbed_events.push((event.id, payload));
            }
        }
    }
    let details = json!({ "messages_cleared": clear_messages.len() });
    let audit = audit.entry(
        facts.workspace_id,
        AuditAction::ContactErased,
        AuditTarget::contact(Some(facts.contact_id)),
        details,
    );
    ErasurePlan {
        clear_messages,
        cancel_messages,
        scrubbed_events,
        forget_answers_to,
        audit,
        deleted_event: DomainEvent::ContactDeleted(ErasedContact { id: facts.contact_id }),
    }
}

/// The event's payload without the person's data, or `None` for an event that is not about the
/// contact or holds nothing of the person (a thread's record has ids only).
fn scrubbed(event: &StoredEvent, facts: &ErasureFacts) -> Option<String> {
    let kind = event.event_type.parse::<EventType>().ok()?;
    let mut envelope: Value = serde_json::from_str(&event.payload).ok()?;
    let subjects = EventSubjects::of(kind, &envelope["data"]);
    let contact_id = facts.contact_id;
    let mine =
        subjects.contact_id == Some(contact_id) || subjects.thread_id.is_some_and(|t| facts.threads.contains(&t));
    if !mine {
        return None;
    }
    match kind {
        EventType::ContactCreated | EventType::ContactUpdated | EventType::ContactDeleted => {
            envelope["data"] = json!({ "id": contact_id });
        }
        EventType::MessageCreated | EventType::MessageStatusUpdated => {
            let data = envelope.get_mut("data")?.as_object_mut()?;
            data.insert("content".into(), Value::from(""));
        }
        _ => return None,
    }
    // The envelope's members in their documented order (`webhooks::payload::envelope`).
    Some(format!(
        r#"{{"type":{},"timestamp":{},"workspace_id":{},"data":{}}}"#,
        envelope["type"], envelope["timestamp"], envelope["workspace_id"], envelope["data"]
    ))
}

#[cfg(test)]
#[path = "erasure_tests.rs"]
mod tests;
