//! The event catalogue as a contract (integrators build on its payloads): each event type's payload schema, published as
//! the OpenAPI document's top-level `webhooks` and by `GET /v1/event-types`, and a realistic
//! sample of each (typed test events). Both come from [`DomainEvent`]: a type's `data` schema is
//! the component of the record its variant carries (the REST record of the resource), and its
//! sample is that record ([`sample_event`]), so a field added to a record shows up in its
//! events' schema and samples too.

use std::borrow::Cow;

use domain::webhooks::payload::test_data;
use domain::webhooks::samples::sample_event;
use domain::webhooks::{DestinationId, DomainEvent, EventRecord, EventType};
use serde_json::{json, Value};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// The OpenAPI component name of `T`.
fn component<T: ToSchema>(_: &T) -> Cow<'static, str> {
    T::name()
}

/// The component schema of the record `event` carries.
pub fn record_component(event: &DomainEvent) -> Cow<'static, str> {
    match event.record() {
        EventRecord::Message(r) => component(r),
        EventRecord::Thread(r) => component(r),
        EventRecord::Contact(r) => component(r),
        EventRecord::ErasedContact(r) => component(r),
        EventRecord::Channel(r) => component(r),
        EventRecord::Webhook(r) => component(r),
        EventRecord::Template(r) => component(r),
    }
}

/// The component schema of an event type's `data`; `None` for `webhook.test` (inline), which is
/// no domain event.
pub fn data_component(event: EventType) -> Option<Cow<'static, str>> {
    sample_event(event, DestinationId(0), OffsetDateTime::UNIX_EPOCH).map(|e| record_component(&e))
}

/// Every type a delivery can carry: the catalogue, then `webhook.test`.
pub fn delivered_types() -> impl Iterator<Item = EventType> {
    EventType::CATALOG.iter().copied().chain([EventType::WebhookTest])
}

/// The JSON Schema of an event's body `{"type","timestamp","workspace_id","data"}`, with `data`
/// a reference into the OpenAPI document's components.
pub fn payload_schema(event: EventType) -> Value {
    let reference = |name: &str| json!({"$ref": format!("#/components/schemas/{name}")});
    let data = match data_component(event) {
        // Erasing a contact rewrites its earlier events to the id alone (docs/product/contacts.md),
        // so a stored or replayed `contact.created|updated` may carry that form.
        Some(name) if matches!(event, EventType::ContactCreated | EventType::ContactUpdated) => {
            json!({"anyOf": [reference(&name), reference(&domain::contacts::ErasedContact::name())]})
        }
        Some(name) => reference(&name),
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
    sample_event(event, destination, now).map_or_else(|| test_data(destination), |e| e.data())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_types_data_schema_is_the_published_component_of_its_variants_record() {
        let doc = crate::openapi::document();
        let components = &doc["components"]["schemas"];
        for &event in EventType::CATALOG {
            let Some(sample) = sample_event(event, DestinationId(1), OffsetDateTime::UNIX_EPOCH) else {
                panic!("{event} has no variant");
            };
            let name = record_component(&sample);
            assert!(components.get(name.as_ref()).is_some(), "{name} is not a published component");
            let data = &payload_schema(event)["properties"]["data"];
            let reference = data.get("$ref").or_else(|| data["anyOf"][0].get("$ref"));
            assert_eq!(reference, Some(&json!(format!("#/components/schemas/{name}"))), "{event}");
            // Every member of the record is a property of its schema (a record with a flattened
            // part lists its properties under `allOf`).
            let schema = &components[name.as_ref()];
            let parts: Vec<&Value> = schema["allOf"].as_array().map_or_else(|| vec![schema], |a| a.iter().collect());
            let properties: Vec<&String> = parts
                .iter()
                .map(|p| {
                    p.get("$ref")
                        .and_then(Value::as_str)
                        .map_or(*p, |r| &components[r.rsplit('/').next().unwrap_or_default()])
                })
                .filter_map(|p| p["properties"].as_object())
                .flat_map(|p| p.keys())
                .collect();
            for member in sample.data().as_object().map(|o| o.keys().collect::<Vec<_>>()).unwrap_or_default() {
                assert!(properties.contains(&member), "{event}: `{member}` is not in {name}");
            }
        }
    }

    #[test]
    fn a_test_event_is_inline_and_every_other_type_names_a_record() {
        assert_eq!(data_component(EventType::WebhookTest), None);
        assert_eq!(data_component(EventType::ContactDeleted).as_deref(), Some("ErasedContact"));
        assert_eq!(data_component(EventType::ThreadAssigned).as_deref(), Some("ThreadRecord"));
        let sample = sample_data(EventType::WebhookTest, DestinationId(3), OffsetDateTime::UNIX_EPOCH);
        assert_eq!(sample["webhook_id"], 3);
    }
}
