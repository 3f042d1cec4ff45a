//! Which person and conversation a stored event is about, kept beside the event so that erasing a
//! contact finds exactly that contact's events through an index, never by searching payloads.

use serde_json::Value;

use super::EventType;

/// The contact and thread an event's `data` belongs to (none for channel and webhook events).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventSubjects {
    /// The contact: `data.id` of a `contact.*` event, `data.contact_id` of a `thread.*` event.
    pub contact_id: Option<i64>,
    /// The thread: `data.thread_id` of a `message.*` event, `data.id` of a `thread.*` event.
    pub thread_id: Option<i64>,
}

impl EventSubjects {
    /// The subjects of an event of type `event` whose data is `data`.
    pub fn of(event: EventType, data: &Value) -> Self {
        let id = |name: &str| data.get(name).and_then(Value::as_i64);
        match event {
            EventType::ContactCreated | EventType::ContactUpdated | EventType::ContactDeleted => {
                Self { contact_id: id("id"), thread_id: None }
            }
            EventType::MessageCreated | EventType::MessageStatusUpdated => {
                Self { contact_id: None, thread_id: id("thread_id") }
            }
            EventType::ThreadCreated
            | EventType::ThreadStatusChanged
            | EventType::ThreadAssigned
            | EventType::ThreadLabelsChanged
            | EventType::SlaBreached => Self { contact_id: id("contact_id"), thread_id: id("id") },
            EventType::ChannelCreated
            | EventType::ChannelUpdated
            | EventType::WebhookDisabled
            | EventType::WebhookFailing
            | EventType::WebhookRecovered
            | EventType::WebhookTest
            | EventType::TemplateStatusUpdated => Self::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_kind_of_event_names_its_contact_and_thread() {
        assert_eq!(
            EventSubjects::of(EventType::ContactUpdated, &json!({"id": 4, "phone": "+1"})),
            EventSubjects { contact_id: Some(4), thread_id: None }
        );
        assert_eq!(
            EventSubjects::of(EventType::MessageCreated, &json!({"id": 9, "thread_id": 7})),
            EventSubjects { contact_id: None, thread_id: Some(7) }
        );
        assert_eq!(
            EventSubjects::of(EventType::ThreadAssigned, &json!({"id": 7, "contact_id": 4})),
            EventSubjects { contact_id: Some(4), thread_id: Some(7) }
        );
        assert_eq!(EventSubjects::of(EventType::ChannelCreated, &json!({"id": 1})), EventSubjects::default());
        assert_eq!(EventSubjects::of(EventType::ContactCreated, &json!({"id": "x"})), EventSubjects::default());
    }
}
