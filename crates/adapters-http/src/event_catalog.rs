//! The event catalogue as a contract (issue 16): each event type's payload schema, published as
//! the OpenAPI document's top-level `webhooks` and by `GET /v1/event-types`, and a realistic
//! sample of each (typed test events). The `data` schemas are the REST records' own
//! ([`crate::dto`]), and the samples are built from those types, so a field added to a record
//! shows up in its events' schema and samples too.

use domain::webhooks::payload::test_data;
use domain::webhooks::{DestinationId, EventType};
use serde_json::{json, Value};
use time::OffsetDateTime;

use domain::contacts::Contact;

use crate::dto::WebhookRecord;
use crate::dto::{
    AssigneeRecord, ChannelRecord, ChannelStatusDto, ChannelTypeDto, DirectionDto, MessageRecord, MessageStatusDto,
    ThreadRecord,
};

/// The component schema of an event type's `data`; `None` for `webhook.test` and
/// `contact.deleted` (inline).
pub fn data_component(event: EventType) -> Option<&'static str> {
    match event {
        EventType::MessageCreated | EventType::MessageStatusUpdated => Some("MessageRecord"),
        EventType::ThreadCreated
        | EventType::ThreadStatusChanged
        | EventType::ThreadAssigned
        | EventType::ThreadLabelsChanged
        | EventType::SlaBreached => Some("ThreadRecord"),
        EventType::ContactCreated | EventType::ContactUpdated => Some("Contact"),
        EventType::ChannelCreated | EventType::ChannelUpdated => Some("ChannelRecord"),
        EventType::WebhookDisabled | EventType::WebhookFailing | EventType::WebhookRecovered => Some("WebhookRecord"),
        EventType::TemplateStatusUpdated => Some("TemplateEventRecord"),
        EventType::WebhookTest | EventType::ContactDeleted => None,
    }
}

/// Every type a delivery can carry: the catalogue, then `webhook.test`.
pub fn delivered_types() -> impl Iterator<Item = EventType> {
    EventType::CATALOG.iter().copied().chain([EventType::WebhookTest])
}

/// The JSON Schema of an event's body `{"type","timestamp","workspace_id","data"}`, with `data`
/// a reference into the OpenAPI document's components.
pub fn payload_schema(event: EventType) -> Value {
    let erased = json!({
        "type": "object",
        "description": "An erased contact: its id only",
        "required": ["id"],
        "additionalProperties": false,
        "properties": {"id": {"type": "integer", "format": "int64", "description": "The erased contact"}}
    });
    let data = match data_component(event) {
        // Erasing a contact rewrites its earlier events to the id alone (docs/product/contacts.md),
        // so a stored or replayed `contact.created|updated` may carry that form.
        Some(name) if matches!(event, EventType::ContactCreated | EventType::ContactUpdated) => {
            json!({"anyOf": [{"$ref": format!("#/components/schemas/{name}")}, erased]})
        }
        Some(name) => json!({"$ref": format!("#/components/schemas/{name}")}),
        None if event == EventType::ContactDeleted => erased,
        None => json!({
            "type": "object",
            "required": ["webhook_id", "message"],
            "properties": {
                "webhook_id": {"type": "integer", "format": "int64", "description": "The destination tested"},
                "message": {"type": "string"}
            }
        }),
    };
    json!({
        "type": "object",
        "description": event.description(),
        "required": ["type", "timestamp", "workspace_id", "data"],
        "properties": {
            "type": {"type": "string", "const": event.as_str()},
            "timestamp": {"type": "string", "format": "date-time", "description": "When it happened (RFC 3339, UTC, milliseconds)"},
            "workspace_id": {"type": "integer", "format": "int64"},
            "data": data
        }
    })
}

/// The OpenAPI 3.1 `webhooks` object: one `POST` per event type, its body the payload schema,
/// signed per Standard Webhooks.
pub fn webhooks_object() -> Value {
    let mut hooks = serde_json::Map::new();
    for event in delivered_types() {
        hooks.insert(
            event.as_str().to_owned(),
            json!({"post": {
                "operationId": format!("event_{}", event.as_str().replace('.', "_")),
                "summary": event.as_str(),
                "description": format!(
                    "{} Sent with the Standard Webhooks headers `webhook-id` (the event's id in `GET /v1/events`), \
                     `webhook-timestamp` and `webhook-signature`.",
                    event.description()
                ),
                "requestBody": {"required": true, "content": {"application/json": {"schema": payload_schema(event)}}},
                "responses": {"2XX": {"description": "Received; any other answer is retried on the schedule"}}
            }}),
        );
    }
    Value::Object(hooks)
}

/// `schema` with every `#/components/schemas/…` reference replaced by the schema it names, so
/// it stands alone (`GET /v1/event-types`).
pub fn inline_refs(schema: &Value, components: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                if let Some(name) = r.strip_prefix("#/components/schemas/") {
                    if let Some(target) = components.get(name) {
                        return inline_refs(target, components);
                    }
                }
            }
            Value::Object(map.iter().map(|(k, v)| (k.clone(), inline_refs(v, components))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| inline_refs(v, components)).collect()),
        other => other.clone(),
    }
}

/// A realistic `data` of `event`, as a test delivery to `destination` sends it.
pub fn sample_data(event: EventType, destination: DestinationId, now: OffsetDateTime) -> Value {
    let message = |direction, status, content: &str| {
        serde_json::to_value(MessageRecord {
            id: 48_213,
            channel_id: 12,
            thread_id: 9_771,
            direction,
            content: content.to_owned(),
            status,
            created_at: now,
            sender: match direction {
                DirectionDto::Inbound => domain::messaging::SenderRecord { kind: "contact", id: Some(5_310) },
                DirectionDto::Outbound => domain::messaging::SenderRecord { kind: "user", id: Some(42) },
            },
        })
    };
    let thread = |status: &str, assignee: Option<AssigneeRecord>| {
        serde_json::to_value(ThreadRecord {
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
            service_window: domain::threads::ServiceWindowRecord {
                open: true,
                expires_at: Some(now + time::Duration::hours(23)),
            },
            sla: None,
        })
    };
    let contact = |name: Option<&str>| {
        serde_json::to_value(Contact {
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
        })
    };
    let channel = |status| {
        serde_json::to_value(ChannelRecord {
            id: 12,
            channel_type: ChannelTypeDto::Whatsapp,
            display_name: "Support DE".to_owned(),
            identifier: "+4930123456789".to_owned(),
            status,
            created_at: now,
            default_team_id: Some(3),
        })
    };
    let value = match event {
        EventType::MessageCreated => {
            message(DirectionDto::Inbound, MessageStatusDto::Delivered, "Hi! Is my order #1042 on its way?")
        }
        EventType::MessageStatusUpdated => message(
            DirectionDto::Outbound,
            MessageStatusDto::Read,
            "Yes, it left our warehouse this morning. Tracking: 00340434161094042557",
        ),
        EventType::ThreadCreated => thread("open", None),
        EventType::ThreadStatusChanged => thread("resolved", None),
        EventType::ThreadAssigned => thread("open", Some(AssigneeRecord { kind: "user".to_owned(), id: 3 })),
        EventType::ThreadLabelsChanged => thread("open", None),
        EventType::SlaBreached => thread("open", None).map(|mut t| {
            t["sla"] = json!({
                "policy_id": 2,
                "first_response_due_at": "2026-11-26T09:30:00Z",
                "next_response_due_at": null,
                "resolution_due_at": "2026-11-27T09:00:00Z",
                "status": "missed",
                "breaches": ["first_response"]
            });
            t
        }),
        EventType::ContactCreated => contact(None),
        EventType::ContactUpdated => contact(Some("Lena Fischer")),
        EventType::ContactDeleted => Ok(json!({"id": 5_310})),
        EventType::ChannelCreated => channel(ChannelStatusDto::Active),
        EventType::ChannelUpdated => channel(ChannelStatusDto::Disconnected),
        EventType::TemplateStatusUpdated => serde_json::to_value(domain::connectors::templates::TemplateEventRecord {
            channel_id: 12,
            template: domain::connectors::templates::TemplateRecord {
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
        EventType::WebhookDisabled => serde_json::to_value(WebhookRecord {
            id: destination.0,
            url: "https://hooks.example.com/wms".to_owned(),
            platform: "custom".to_owned(),
            events: vec!["message.created".to_owned()],
            active: false,
            created_at: now,
            updated_at: now,
            disabled_reason: Some("every delivery failed for 5 days (since 2026-11-19T08:00:00Z)".to_owned()),
            disabled_at: Some(now),
            rate_limit_per_second: None,
            max_in_flight: None,
            headers: Default::default(),
            filter: None,
            ordering: Default::default(),
        }),
        EventType::WebhookFailing | EventType::WebhookRecovered => serde_json::to_value(WebhookRecord {
            id: destination.0,
            url: "https://hooks.example.com/wms".to_owned(),
            platform: "custom".to_owned(),
            events: vec!["message.created".to_owned()],
            active: true,
            created_at: now,
            updated_at: now,
            disabled_reason: None,
            disabled_at: None,
            rate_limit_per_second: Some(50),
            max_in_flight: None,
            headers: [("x-api-key".to_owned(), String::new())].into_iter().collect(),
            filter: None,
            ordering: domain::webhooks::controls::DeliveryOrdering::PerThread,
        }),
        EventType::WebhookTest => Ok(test_data(destination)),
    };
    value.unwrap_or(Value::Null)
}
