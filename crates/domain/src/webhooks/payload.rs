//! The body of every delivery: `{"type", "timestamp", "workspace_id", "data"}` (`docs/contract.md`).

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::event_type::EventType;
use crate::workspace::WorkspaceId;

/// An event's time as its body shows it (`timestamp`) and as it is stored: UTC, to the
/// millisecond, so receivers can order events that happen within one second, and a feed or replay
/// window starting at an event's `timestamp` includes that event.
pub fn event_time(at: OffsetDateTime) -> OffsetDateTime {
    let at = at.to_offset(time::UtcOffset::UTC);
    at.replace_nanosecond(at.nanosecond() / 1_000_000 * 1_000_000).unwrap_or(at)
}

/// The JSON body of an event, with its members in the documented order; `timestamp` is
/// [`event_time`].
pub fn envelope(event: EventType, at: OffsetDateTime, workspace: WorkspaceId, data: &serde_json::Value) -> String {
    let timestamp = event_time(at).format(&Rfc3339).unwrap_or_default();
    format!(
        r#"{{"type":{},"timestamp":{},"workspace_id":{},"data":{}}}"#,
        serde_json::Value::from(event.as_str()),
        serde_json::Value::from(timestamp),
        workspace.0,
        data
    )
}

/// The `data` of a `webhook.test` event.
pub fn test_data(destination: super::model::DestinationId) -> serde_json::Value {
    serde_json::json!({
        "webhook_id": destination.0,
        "message": "This is a test event sent on request; it is signed like every other delivery.",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn envelope_has_the_documented_members_in_order() {
        let body = envelope(
            EventType::MessageCreated,
            datetime!(2026-05-02 08:16:03.123456 UTC),
            WorkspaceId(42),
            &serde_json::json!({"id": 7}),
        );
        assert_eq!(
            body,
            r#"{"type":"message.created","timestamp":"2026-05-02T08:16:03.123Z","workspace_id":42,"data":{"id":7}}"#
        );
        let whole = envelope(
            EventType::WebhookTest,
            datetime!(2026-05-02 08:16:03 UTC),
            WorkspaceId(1),
            &serde_json::json!({}),
        );
        assert!(whole.contains(r#""timestamp":"2026-05-02T08:16:03Z""#), "{whole}");
    }
}
