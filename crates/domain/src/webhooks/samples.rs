//! A realistic event of each type, as a test delivery sends it (`POST /v1/webhooks/{id}/test`
//! with `"event"`) and the catalogue shows it: built from the records themselves, so a field
//! added to a record shows up in the samples too.

use time::OffsetDateTime;

use super::controls::DeliveryOrdering;
use super::event::DomainEvent;
use super::model::DestinationId;
use super::record::WebhookRecord;
use super::EventType;
use crate::channels::{ChannelRecord, ChannelStatus, ChannelType};
use crate::connectors::templates::{TemplateEventRecord, TemplateRecord};
use crate::contacts::{Contact, ErasedContact};
use crate::messaging::{Direction, MessageRecord, MessageStatus, SenderRecord};
use crate::threads::{AssigneeRecord, ServiceWindowRecord, ThreadRecord};

/// A sample event of type `event` about `destination` (for the `webhook.*` types) at `now`;
/// `None` for `webhook.test`, which is no domain event ([`super::payload::test_data`]).
pub fn sample_event(event: EventType, destination: DestinationId, now: OffsetDateTime) -> Option<DomainEvent> {
    let message = |direction, status, content: &str| MessageRecord {
        id: 48_213,
        channel_id: 12,
        thread_id: 9_771,
        direction,
        content: content.to_owned(),
        status,
        created_at: now,
        sender: match direction {
            Direction::Inbound => SenderRecord { kind: "contact", id: Some(5_310) },
            Direction::Outbound => SenderRecord { kind: "user", id: Some(42) },
        },
    };
    let thread = |status: &str, assignee: Option<AssigneeRecord>| ThreadRecord {
        id: 9_771,
        channel_id: 12,
        contact_id: 5_310,
        status: status.to_owned(),
        unread_count: 1,
        assignee: assignee.clone(),
        handover_status: None,
        last_message_at: Some(now),
        created_at: now,
        labels: vec!["billing".to_owned()],
        snoozed_until: None,
        status_reason: (status != "open").then(|| "manual".to_owned()),
        team_id: Some(3),
        assigned_at: assignee.as_ref().map(|_| now),
        assignment_reason: assignee.as_ref().map(|_| "balanced".to_owned()),
        service_window: ServiceWindowRecord { open: true, expires_at: Some(now + time::Duration::hours(23)) },
        sla: None,
    };
    let contact = |name: Option<&str>| Contact {
        id: 5_310,
        name: name.map(str::to_owned),
        phone: Some("+4915112345678".to_owned()),
        email: None,
        country: Some("DE".to_owned()),
        language: Some("de".to_owned()),
        note: None,
        created_at: now,
        updated_at: now,
        first_contacted_at: Some(now),
        last_contacted_at: Some(now),
    };
    let channel = |status| ChannelRecord {
        id: 12,
        channel_type: ChannelType::Whatsapp,
        display_name: "Support DE".to_owned(),
        identifier: "+4930123456789".to_owned(),
        status,
        created_at: now,
        default_team_id: Some(3),
    };
    let destination = |active: bool| WebhookRecord {
        id: destination.0,
        url: "https://hooks.example.com/wms".to_owned(),
        platform: "custom".to_owned(),
        events: vec!["message.created".to_owned()],
        active,
        created_at: now,
        updated_at: now,
        disabled_reason: None,
        disabled_at: None,
        rate_limit_per_second: None,
        max_in_flight: None,
        headers: Default::default(),
        filter: None,
        ordering: Default::default(),
    };
    Some(match event {
        EventType::MessageCreated => DomainEvent::MessageCreated(message(
            Direction::Inbound,
            MessageStatus::Delivered,
            "Hi! Is my order #1042 on its way?",
        )),
        EventType::MessageStatusUpdated => DomainEvent::MessageStatusUpdated(message(
            Direction::Outbound,
            MessageStatus::Read,
            "Yes, it left our warehouse this morning. Tracking: 00340434161094042557",
        )),
        EventType::ThreadCreated => DomainEvent::ThreadCreated(thread("open", None)),
        EventType::ThreadStatusChanged => DomainEvent::ThreadStatusChanged(thread("resolved", None)),
        EventType::ThreadAssigned => {
            DomainEvent::ThreadAssigned(thread("open", Some(AssigneeRecord { kind: "user".to_owned(), id: 3 })))
        }
        EventType::ThreadLabelsChanged => DomainEvent::ThreadLabelsChanged(thread("open", None)),
        EventType::SlaBreached => DomainEvent::SlaBreached(ThreadRecord {
            sla: Some(crate::sla::ThreadSlaRecord {
                policy_id: Some(2),
                first_response_due_at: Some(now - time::Duration::minutes(5)),
                next_response_due_at: None,
                resolution_due_at: Some(now + time::Duration::hours(23)),
                status: "missed".to_owned(),
                breaches: vec!["first_response".to_owned()],
            }),
            ..thread("open", None)
        }),
        EventType::ContactCreated => DomainEvent::ContactCreated(contact(None)),
        EventType::ContactUpdated => DomainEvent::ContactUpdated(contact(Some("Lena Fischer"))),
        EventType::ContactDeleted => DomainEvent::ContactDeleted(ErasedContact { id: 5_310 }),
        EventType::ChannelCreated => DomainEvent::ChannelCreated(channel(ChannelStatus::Active)),
        EventType::ChannelUpdated => DomainEvent::ChannelUpdated(channel(ChannelStatus::Disconnected)),
        EventType::TemplateStatusUpdated => DomainEvent::TemplateStatusUpdated(TemplateEventRecord {
            channel_id: 12,
            template: TemplateRecord {
                name: "order_shipped".to_owned(),
                language: "de".to_owned(),
                category: "UTILITY".to_owned(),
                status: "paused".to_owned(),
                quality: Some("RED".to_owned()),
                parameters: 2,
                body: "Hallo {{1}}, Ihre Bestellung {{2}} ist unterwegs.".to_owned(),
                rejected_reason: None,
                updated_at: now,
            },
        }),
        EventType::WebhookDisabled => DomainEvent::WebhookDisabled(WebhookRecord {
            disabled_reason: Some("every delivery failed for 5 days (since 2026-11-19T08:00:00Z)".to_owned()),
            disabled_at: Some(now),
            ..destination(false)
        }),
        EventType::WebhookFailing | EventType::WebhookRecovered => {
            let record = WebhookRecord {
                rate_limit_per_second: Some(50),
                headers: [("x-api-key".to_owned(), String::new())].into_iter().collect(),
                ordering: DeliveryOrdering::PerThread,
                ..destination(true)
            };
            if event == EventType::WebhookFailing {
                DomainEvent::WebhookFailing(record)
            } else {
                DomainEvent::WebhookRecovered(record)
            }
        }
        EventType::WebhookTest => return None,
    })
}

/// The sample thread record, for the tests of decisions that emit thread events.
#[cfg(test)]
pub(crate) fn sample_thread() -> ThreadRecord {
    match sample_event(EventType::ThreadCreated, DestinationId(1), OffsetDateTime::UNIX_EPOCH) {
        Some(DomainEvent::ThreadCreated(t)) => t,
        other => panic!("not a thread event: {other:?}"),
    }
}
