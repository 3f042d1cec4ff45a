//! The event catalog: the types a destination can subscribe to, and a validated list of them.

use std::fmt;
use std::str::FromStr;

use crate::common::error::{FieldError, ValidationErrors};

/// The kinds of event a destination can receive (`docs/contract.md`, "Events as a contract").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventType {
    /// A message was created (outbound through the API, or inbound from a platform).
    MessageCreated,
    /// An outbound message changed status.
    MessageStatusUpdated,
    /// A thread started.
    ThreadCreated,
    /// A thread's status changed.
    ThreadStatusChanged,
    /// A thread was assigned or reassigned.
    ThreadAssigned,
    /// A thread's set of labels changed.
    ThreadLabelsChanged,
    /// A contact was created.
    ContactCreated,
    /// A contact's details changed.
    ContactUpdated,
    /// A contact was erased (GDPR art. 17); the data is the id only.
    ContactDeleted,
    /// A channel was added.
    ChannelCreated,
    /// A channel changed.
    ChannelUpdated,
    /// wms deactivated a destination (a 410 answer, or every delivery failed for days).
    WebhookDisabled,
    /// Meta changed a WhatsApp template's status (approved, rejected, paused, …).
    TemplateStatusUpdated,
    /// A destination's last 4 attempts in a row failed (sent to the workspace's other destinations).
    WebhookFailing,
    /// A failing destination delivered again (sent to the workspace's other destinations).
    WebhookRecovered,
    /// A thread's SLA target was missed.
    SlaBreached,
    /// Sent only on request to check an endpoint; not part of the catalog.
    WebhookTest,
}

impl EventType {
    /// Whether an event of this type is about a destination that never receives it
    /// (`webhook.failing` / `webhook.recovered`: the others hear of it; `data.id` names it).
    pub fn names_a_destination(self) -> bool {
        matches!(self, EventType::WebhookFailing | EventType::WebhookRecovered)
    }

    /// The catalog: every event a destination may subscribe to.
    pub const CATALOG: &'static [EventType] = &[
        EventType::MessageCreated,
        EventType::MessageStatusUpdated,
        EventType::ThreadCreated,
        EventType::ThreadStatusChanged,
        EventType::ThreadAssigned,
        EventType::ThreadLabelsChanged,
        EventType::ContactCreated,
        EventType::ContactUpdated,
        EventType::ContactDeleted,
        EventType::ChannelCreated,
        EventType::ChannelUpdated,
        EventType::WebhookDisabled,
        EventType::TemplateStatusUpdated,
        EventType::WebhookFailing,
        EventType::WebhookRecovered,
        EventType::SlaBreached,
    ];

    /// The wire name (`message.created`).
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::MessageCreated => "message.created",
            EventType::MessageStatusUpdated => "message.status_updated",
            EventType::ThreadCreated => "thread.created",
            EventType::ThreadStatusChanged => "thread.status_changed",
            EventType::ThreadAssigned => "thread.assigned",
            EventType::ThreadLabelsChanged => "thread.labels_changed",
            EventType::ContactCreated => "contact.created",
            EventType::ContactUpdated => "contact.updated",
            EventType::ContactDeleted => "contact.deleted",
            EventType::ChannelCreated => "channel.created",
            EventType::ChannelUpdated => "channel.updated",
            EventType::WebhookDisabled => "webhook.disabled",
            EventType::TemplateStatusUpdated => "template.status_updated",
            EventType::WebhookFailing => "webhook.failing",
            EventType::WebhookRecovered => "webhook.recovered",
            EventType::SlaBreached => "sla.breached",
            EventType::WebhookTest => "webhook.test",
        }
    }

    /// What happened, in a sentence (`GET /v1/event-types`, the OpenAPI `webhooks`).
    pub fn description(self) -> &'static str {
        match self {
            EventType::MessageCreated => {
                "A message was created: sent through the API or the inbox, or received from a platform. `data` is the Message."
            }
            EventType::MessageStatusUpdated => {
                "An outbound message changed status (sent, delivered, read, failed). `data` is the Message."
            }
            EventType::ThreadCreated => "A conversation started. `data` is the Thread.",
            EventType::ThreadStatusChanged => {
                "A thread's status changed (resolved, reopened by a new message, …). `data` is the Thread."
            }
            EventType::ThreadAssigned => "A thread was assigned, reassigned or unassigned. `data` is the Thread.",
            EventType::ThreadLabelsChanged => "A thread's set of labels changed. `data` is the Thread.",
            EventType::ContactCreated => "A contact was created. `data` is the Contact.",
            EventType::ContactUpdated => "A contact's details changed. `data` is the Contact.",
            EventType::ContactDeleted => {
                "A contact was erased (GDPR art. 17): its personal details and message texts are gone. `data` is `{\"id\"}` only."
            }
            EventType::ChannelCreated => "A channel was added. `data` is the Channel (never its credentials).",
            EventType::ChannelUpdated => "A channel changed. `data` is the Channel (never its credentials).",
            EventType::WebhookDisabled => {
                "wms deactivated a webhook destination; sent to the workspace's other destinations. `data` is the destination with `disabled_reason`."
            }
            EventType::TemplateStatusUpdated => {
                "Meta changed a WhatsApp template's status (approved, rejected, paused, …). `data` is the Template with `channel_id`."
            }
            EventType::WebhookFailing => {
                "A webhook destination failed 4 attempts in a row; sent once per run of failures to the workspace's other destinations. `data` is the destination, its URL without user-info, query or fragment."
            }
            EventType::WebhookRecovered => {
                "A failing webhook destination delivered again; sent to the workspace's other destinations. `data` is the destination, its URL without user-info, query or fragment."
            }
            EventType::SlaBreached => {
                "A thread's SLA target (first response, next response or resolution) was missed; once per missed target. `data` is the Thread, its `sla.breaches` naming every target missed so far."
            }
            EventType::WebhookTest => "Sent on request to check an endpoint; never in the events feed.",
        }
    }

    /// Whether a destination may subscribe to it (everything but `webhook.test`).
    pub fn is_subscribable(self) -> bool {
        self != EventType::WebhookTest
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EventType {
    type Err = FieldError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::CATALOG
            .iter()
            .copied()
            .chain([EventType::WebhookTest])
            .find(|e| e.as_str() == s)
            .ok_or_else(|| FieldError::new("events", format!("`{s}` is not an event type")))
    }
}

/// A non-empty, duplicate-free list of subscribable events, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventList(Vec<EventType>);

impl EventList {
    /// Validates the `events` input.
    ///
    /// # Errors
    /// One [`FieldError`] per unknown name (`events[2]`), naming it; or one on `events` when empty.
    pub fn new(raw: &[String]) -> Result<Self, ValidationErrors> {
        if raw.is_empty() {
            return Err(ValidationErrors::one("events", "must list at least one event type"));
        }
        let catalog: Vec<&str> = EventType::CATALOG.iter().map(|e| e.as_str()).collect();
        let mut errors = ValidationErrors::default();
        let mut events = Vec::with_capacity(raw.len());
        for (i, name) in raw.iter().enumerate() {
            match name.trim().parse::<EventType>() {
                Ok(e) if e.is_subscribable() => {
                    if !events.contains(&e) {
                        events.push(e);
                    }
                }
                Ok(_) => errors.0.push(FieldError::new(
                    format!("events[{i}]"),
                    "`webhook.test` cannot be subscribed to; it is sent only on request",
                )),
                Err(_) => errors.0.push(FieldError::new(
                    format!("events[{i}]"),
                    format!("unknown event type `{name}`; the catalog is {}", catalog.join(", ")),
                )),
            }
        }
        errors.into_result()?;
        Ok(Self(events))
    }

    /// The events.
    pub fn as_slice(&self) -> &[EventType] {
        &self.0
    }

    /// The wire names, for storage.
    pub fn names(&self) -> Vec<String> {
        self.0.iter().map(|e| e.as_str().to_owned()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_round_trip_and_test_is_not_subscribable() {
        for e in EventType::CATALOG.iter().copied() {
            assert_eq!(e.as_str().parse::<EventType>(), Ok(e));
            assert!(e.is_subscribable());
        }
        assert_eq!("webhook.test".parse::<EventType>(), Ok(EventType::WebhookTest));
        assert!(!EventType::WebhookTest.is_subscribable());
    }

    #[test]
    fn event_list_names_every_unknown_event() {
        let raw = vec!["message.created".to_owned(), "message.deleted".into(), "thread.moved".into()];
        let err = EventList::new(&raw).err().map(|e| e.0).unwrap_or_default();
        assert_eq!(err.len(), 2);
        assert_eq!(err[0].field, "events[1]");
        assert!(err[0].message.contains("message.deleted"));
        assert!(err[1].message.contains("thread.moved"));
    }

    #[test]
    fn event_list_refuses_empty_and_test_and_dedupes() {
        assert!(EventList::new(&[]).is_err());
        assert!(EventList::new(&["webhook.test".to_owned()]).is_err());
        let l = EventList::new(&["thread.created".to_owned(), "thread.created".into()]).ok();
        assert_eq!(l.map(|l| l.names()), Some(vec!["thread.created".to_owned()]));
    }
}
