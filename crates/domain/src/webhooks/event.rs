//! The events wms records: one variant per entry of the catalogue ([`EventType::CATALOG`]), each
//! carrying the typed record that is its `data` — the same record the REST API answers for the
//! resource (`docs/contract.md`, "Events as a contract"). Domain decisions return these values;
//! `adapters_postgres::webhooks::outbox::record` writes them, and the event catalogue (the
//! OpenAPI `webhooks`, `GET /v1/event-types`) names each type's `data` schema from the record its
//! variant carries.

use super::controls::EventScope;
use super::model::DestinationId;
use super::record::WebhookRecord;
use super::{EventSubjects, EventType};
use crate::channels::ChannelRecord;
use crate::connectors::templates::TemplateEventRecord;
use crate::contacts::{Contact, ErasedContact};
use crate::messaging::MessageRecord;
use crate::threads::ThreadRecord;

/// Something that happened, with its record: what an event's `data` is.
#[derive(Debug, Clone, PartialEq)]
pub enum DomainEvent {
    /// `message.created`.
    MessageCreated(MessageRecord),
    /// `message.status_updated`.
    MessageStatusUpdated(MessageRecord),
    /// `thread.created`.
    ThreadCreated(ThreadRecord),
    /// `thread.status_changed`.
    ThreadStatusChanged(ThreadRecord),
    /// `thread.assigned`.
    ThreadAssigned(ThreadRecord),
    /// `thread.labels_changed`.
    ThreadLabelsChanged(ThreadRecord),
    /// `sla.breached`: the thread with its `sla`, once per missed target.
    SlaBreached(ThreadRecord),
    /// `contact.created`.
    ContactCreated(Contact),
    /// `contact.updated`.
    ContactUpdated(Contact),
    /// `contact.deleted`: the id only.
    ContactDeleted(ErasedContact),
    /// `channel.created`.
    ChannelCreated(ChannelRecord),
    /// `channel.updated`.
    ChannelUpdated(ChannelRecord),
    /// `webhook.disabled`: the destination wms deactivated.
    WebhookDisabled(WebhookRecord),
    /// `template.status_updated`.
    TemplateStatusUpdated(TemplateEventRecord),
    /// `webhook.failing`: the destination that failed.
    WebhookFailing(WebhookRecord),
    /// `webhook.recovered`: the destination that delivered again.
    WebhookRecovered(WebhookRecord),
}

/// The record an event carries, by kind of resource.
#[derive(Debug, Clone, Copy)]
pub enum EventRecord<'a> {
    /// A message.
    Message(&'a MessageRecord),
    /// A thread.
    Thread(&'a ThreadRecord),
    /// A contact.
    Contact(&'a Contact),
    /// An erased contact.
    ErasedContact(&'a ErasedContact),
    /// A channel.
    Channel(&'a ChannelRecord),
    /// A webhook destination.
    Webhook(&'a WebhookRecord),
    /// A WhatsApp template.
    Template(&'a TemplateEventRecord),
}

impl DomainEvent {
    /// Its type in the catalogue.
    pub fn event_type(&self) -> EventType {
        match self {
            Self::MessageCreated(_) => EventType::MessageCreated,
            Self::MessageStatusUpdated(_) => EventType::MessageStatusUpdated,
            Self::ThreadCreated(_) => EventType::ThreadCreated,
            Self::ThreadStatusChanged(_) => EventType::ThreadStatusChanged,
            Self::ThreadAssigned(_) => EventType::ThreadAssigned,
            Self::ThreadLabelsChanged(_) => EventType::ThreadLabelsChanged,
            Self::SlaBreached(_) => EventType::SlaBreached,
            Self::ContactCreated(_) => EventType::ContactCreated,
            Self::ContactUpdated(_) => EventType::ContactUpdated,
            Self::ContactDeleted(_) => EventType::ContactDeleted,
            Self::ChannelCreated(_) => EventType::ChannelCreated,
            Self::ChannelUpdated(_) => EventType::ChannelUpdated,
            Self::WebhookDisabled(_) => EventType::WebhookDisabled,
            Self::TemplateStatusUpdated(_) => EventType::TemplateStatusUpdated,
            Self::WebhookFailing(_) => EventType::WebhookFailing,
            Self::WebhookRecovered(_) => EventType::WebhookRecovered,
        }
    }

    /// The record it carries.
    pub fn record(&self) -> EventRecord<'_> {
        match self {
            Self::MessageCreated(m) | Self::MessageStatusUpdated(m) => EventRecord::Message(m),
            Self::ThreadCreated(t)
            | Self::ThreadStatusChanged(t)
            | Self::ThreadAssigned(t)
            | Self::ThreadLabelsChanged(t)
            | Self::SlaBreached(t) => EventRecord::Thread(t),
            Self::ContactCreated(c) | Self::ContactUpdated(c) => EventRecord::Contact(c),
            Self::ContactDeleted(c) => EventRecord::ErasedContact(c),
            Self::ChannelCreated(c) | Self::ChannelUpdated(c) => EventRecord::Channel(c),
            Self::WebhookDisabled(w) | Self::WebhookFailing(w) | Self::WebhookRecovered(w) => EventRecord::Webhook(w),
            Self::TemplateStatusUpdated(t) => EventRecord::Template(t),
        }
    }

    /// The event's `data`. A destination's record goes out in its public form
    /// ([`WebhookRecord::event_data`]): events reach every subscriber of the workspace.
    pub fn data(&self) -> serde_json::Value {
        let json = |v: Result<serde_json::Value, serde_json::Error>| v.unwrap_or(serde_json::Value::Null);
        match self.record() {
            EventRecord::Message(m) => json(serde_json::to_value(m)),
            EventRecord::Thread(t) => json(serde_json::to_value(t)),
            EventRecord::Contact(c) => json(serde_json::to_value(c)),
            EventRecord::ErasedContact(c) => json(serde_json::to_value(c)),
            EventRecord::Channel(c) => json(serde_json::to_value(c)),
            EventRecord::Webhook(w) => w.event_data(),
            EventRecord::Template(t) => json(serde_json::to_value(t)),
        }
    }

    /// The contact and thread it is about, stored beside it so that erasing a contact finds its
    /// events by index ([`EventSubjects::of`] reads the same from stored `data`).
    pub fn subjects(&self) -> EventSubjects {
        match self.record() {
            EventRecord::Message(m) => EventSubjects { contact_id: None, thread_id: Some(m.thread_id) },
            EventRecord::Thread(t) => EventSubjects { contact_id: Some(t.contact_id), thread_id: Some(t.id) },
            EventRecord::Contact(c) => EventSubjects { contact_id: Some(c.id), thread_id: None },
            EventRecord::ErasedContact(c) => EventSubjects { contact_id: Some(c.id), thread_id: None },
            EventRecord::Channel(_) | EventRecord::Webhook(_) | EventRecord::Template(_) => EventSubjects::default(),
        }
    }

    /// Its channel and thread, which a destination's filter and per-thread ordering look at.
    pub fn scope(&self) -> EventScope {
        match self.record() {
            EventRecord::Message(m) => EventScope { channel_id: Some(m.channel_id), thread_id: Some(m.thread_id) },
            EventRecord::Thread(t) => EventScope { channel_id: Some(t.channel_id), thread_id: Some(t.id) },
            EventRecord::Channel(c) => EventScope { channel_id: Some(c.id), thread_id: None },
            EventRecord::Template(t) => EventScope { channel_id: Some(t.channel_id), thread_id: None },
            EventRecord::Contact(_) | EventRecord::ErasedContact(_) | EventRecord::Webhook(_) => EventScope::default(),
        }
    }

    /// The destination that never receives it: the one a `webhook.failing` or
    /// `webhook.recovered` is about (the others hear of it). A disabled destination is inactive
    /// and receives nothing anyway.
    pub fn excluded_destination(&self) -> Option<DestinationId> {
        match self {
            Self::WebhookFailing(w) | Self::WebhookRecovered(w) => Some(DestinationId(w.id)),
            _ => None,
        }
    }

    /// [`DomainEvent::excluded_destination`] of a stored event of type `event` whose `data` is
    /// `data` (a replay reads it back).
    pub fn excluded_destination_of(event: EventType, data: &serde_json::Value) -> Option<DestinationId> {
        if event.names_a_destination() {
            data.get("id").and_then(serde_json::Value::as_i64).map(DestinationId)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::samples::sample_event;
    use super::*;
    use crate::workspace::WorkspaceId;
    use time::macros::datetime;

    fn now() -> time::OffsetDateTime {
        datetime!(2026-11-26 10:00:00 UTC)
    }

    fn samples() -> Vec<DomainEvent> {
        EventType::CATALOG.iter().filter_map(|&e| sample_event(e, DestinationId(4), now())).collect()
    }

    #[test]
    fn every_catalogue_entry_has_a_variant_of_its_own_name() {
        let types: Vec<EventType> = samples().iter().map(DomainEvent::event_type).collect();
        assert_eq!(types, EventType::CATALOG);
        for e in samples() {
            // The variant's name is the wire name in CamelCase (`thread.status_changed`:
            // `ThreadStatusChanged`).
            let variant = format!("{e:?}");
            let camel: String =
                e.event_type().as_str().split(['.', '_']).map(|w| w[..1].to_uppercase() + &w[1..]).collect();
            assert!(variant.starts_with(&format!("{camel}(")), "{variant} is not {camel}");
        }
    }

    #[test]
    fn events_with_a_channel_in_their_data_are_scoped_to_it() {
        for e in samples() {
            let data = e.data();
            let channel = match e.event_type() {
                EventType::ChannelCreated | EventType::ChannelUpdated => data["id"].as_i64(),
                _ => data["channel_id"].as_i64(),
            };
            assert_eq!(e.scope().channel_id, channel, "{}: a channel filter must see its channel", e.event_type());
        }
    }

    #[test]
    fn the_typed_subjects_and_scope_are_those_read_from_the_data() {
        for e in samples() {
            let data = e.data();
            assert_eq!(e.subjects(), EventSubjects::of(e.event_type(), &data), "{}", e.event_type());
            assert_eq!(e.scope(), EventScope::of(e.event_type(), &data), "{}", e.event_type());
            assert_eq!(
                e.excluded_destination(),
                DomainEvent::excluded_destination_of(e.event_type(), &data),
                "{}",
                e.event_type()
            );
            // And from the stored body a replay reads back.
            let stored = super::super::payload::envelope(e.event_type(), now(), WorkspaceId(1), &data);
            let read = crate::events::ReplayCandidate::of_stored(7, e.event_type().as_str(), &stored);
            assert_eq!((read.scope, read.about), (e.scope(), e.excluded_destination()), "{}", e.event_type());
            let int = |k: &str| data.get(k).and_then(serde_json::Value::as_i64);
            let read = match e.record() {
                EventRecord::Message(_) => EventScope { channel_id: int("channel_id"), thread_id: int("thread_id") },
                EventRecord::Thread(_) => EventScope { channel_id: int("channel_id"), thread_id: int("id") },
                EventRecord::Channel(_) => EventScope { channel_id: int("id"), thread_id: None },
                EventRecord::Template(_) => EventScope { channel_id: int("channel_id"), thread_id: None },
                _ => EventScope::default(),
            };
            assert_eq!(e.scope(), read, "{}", e.event_type());
        }
    }

    #[test]
    fn a_destinations_event_is_public_and_never_sent_to_itself() {
        let now = datetime!(2026-11-26 10:00:00 UTC);
        let mut record = match sample_event(EventType::WebhookFailing, DestinationId(4), now) {
            Some(DomainEvent::WebhookFailing(w)) => w,
            other => panic!("{other:?}"),
        };
        record.url = "https://user:pw@hooks.example.com/in?token=s3cret".into();
        record.headers.insert("authorization".into(), "Bearer s3cret".into());
        let failing = DomainEvent::WebhookFailing(record.clone());
        assert!(!failing.data().to_string().contains("s3cret"), "{}", failing.data());
        assert_eq!(failing.excluded_destination(), Some(DestinationId(4)));
        assert_eq!(DomainEvent::WebhookRecovered(record.clone()).excluded_destination(), Some(DestinationId(4)));
        assert!(!DomainEvent::WebhookDisabled(record).data().to_string().contains("s3cret"));
    }

    #[test]
    fn an_erased_contact_is_its_id_alone() {
        let e = DomainEvent::ContactDeleted(ErasedContact { id: 7 });
        assert_eq!(e.data(), serde_json::json!({"id": 7}));
        assert_eq!(e.subjects(), EventSubjects { contact_id: Some(7), thread_id: None });
    }
}
