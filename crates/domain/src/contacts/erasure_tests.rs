//! Unit and property tests of [`plan_erasure`].

use proptest::prelude::*;
use serde_json::json;
use time::macros::datetime;

use super::*;
use crate::webhooks::payload::envelope;

const WS: WorkspaceId = WorkspaceId(1);

fn event(id: i64, kind: EventType, data: &Value) -> StoredEvent {
    StoredEvent {
        id,
        event_type: kind.as_str().to_owned(),
        payload: envelope(kind, datetime!(2026-11-26 10:00 UTC), WS, data),
    }
}

fn message(id: i64, direction: Direction, status: MessageStatus) -> ErasedMessage {
    ErasedMessage { id: MessageId(id), direction, status }
}

/// A person: contact `id` with one thread `id * 10`, the contact's events and a message event
/// that quotes their address.
fn person_events(first_event: i64, id: i64, phone: &str, email: &str) -> Vec<StoredEvent> {
    let contact = json!({"id": id, "name": format!("Person {id}"), "phone": phone, "email": email, "country": "PT"});
    vec![
        event(first_event, EventType::ContactCreated, &contact),
        event(first_event + 1, EventType::ContactUpdated, &contact),
        event(first_event + 2, EventType::ThreadCreated, &json!({"id": id * 10, "contact_id": id, "status": "open"})),
        event(
            first_event + 3,
            EventType::MessageCreated,
            &json!({"id": id * 100, "thread_id": id * 10, "content": format!("call me on {phone} or {email}")}),
        ),
    ]
}

fn facts(contact_id: i64, events: Vec<StoredEvent>, messages: Vec<ErasedMessage>) -> ErasureFacts {
    ErasureFacts { workspace_id: WS, contact_id, threads: vec![contact_id * 10], messages, events }
}

#[test]
fn messages_are_cleared_and_only_queued_outbound_ones_cancelled() {
    let f = facts(
        1,
        Vec::new(),
        vec![
            message(1, Direction::Outbound, MessageStatus::Queued),
            message(2, Direction::Outbound, MessageStatus::Sent),
            message(3, Direction::Inbound, MessageStatus::Delivered),
            message(4, Direction::Outbound, MessageStatus::Failed),
        ],
    );
    let plan = plan_erasure(&f, &AuditContext::system());
    assert_eq!(plan.clear_messages, [1, 2, 3, 4].map(MessageId));
    assert_eq!(plan.cancel_messages, [MessageId(1)]);
}

#[test]
fn the_audit_record_counts_the_messages_and_holds_nothing_of_the_person() {
    let f = facts(
        7,
        person_events(1, 7, "+14155550123", "ann@example.com"),
        vec![message(1, Direction::Inbound, MessageStatus::Read)],
    );
    let plan = plan_erasure(&f, &AuditContext::system());
    assert_eq!(plan.audit.action, AuditAction::ContactErased);
    assert_eq!(plan.audit.target, Some(AuditTarget::contact(Some(7))));
    assert_eq!(plan.audit.details, json!({"messages_cleared": 1}));
    assert_eq!(plan.deleted_event.data(), json!({"id": 7}));
}

#[test]
fn contact_events_keep_the_id_message_events_lose_the_content_thread_events_stay() {
    let events = person_events(1, 7, "+14155550123", "ann@example.com");
    let plan = plan_erasure(&facts(7, events.clone(), Vec::new()), &AuditContext::system());
    let by_id: std::collections::HashMap<i64, Value> =
        plan.scrubbed_events.iter().map(|(id, p)| (*id, serde_json::from_str(p).expect("json"))).collect();
    assert_eq!(by_id.len(), 3, "the thread event holds ids only: {by_id:?}");
    assert_eq!(by_id[&1]["data"], json!({"id": 7}));
    assert_eq!(by_id[&2]["data"], json!({"id": 7}));
    assert_eq!(by_id[&4]["data"]["content"], "");
    assert_eq!(by_id[&4]["data"]["thread_id"], 70);
    assert_eq!(by_id[&4]["type"], "message.created");
    assert!(plan.scrubbed_events[0].1.starts_with(r#"{"type":"contact.created","timestamp":"#));
    assert_eq!(plan.forget_answers_to, [1, 2, 4]);
}

fn address_pair() -> impl Strategy<Value = ((String, String), (String, String))> {
    // One address inside the other, in either order: the cases a substring scrub got wrong.
    ("[0-9]{6,10}", "[0-9]{1,4}", "[a-z]{1,6}", "[a-z]{1,3}", "[a-z]{1,3}", any::<bool>()).prop_map(
        |(digits, more, local, before, after, swap)| {
            let short = (format!("+1{digits}"), format!("{local}@b.co"));
            let long = (format!("+1{digits}{more}"), format!("{before}{local}@b.co{after}"));
            if swap {
                (long, short)
            } else {
                (short, long)
            }
        },
    )
}

proptest! {
    /// Whatever the two people's phones and e-mails (one a prefix or part of the other's), and
    /// even when every event of the workspace is in the facts, erasing one changes nothing of
    /// the other's events and leaves none of the erased person's addresses in theirs.
    #[test]
    fn erasure_never_changes_another_contacts_data(((phone_a, email_a), (phone_b, email_b)) in address_pair()) {
        let mut events = person_events(1, 1, &phone_a, &email_a);
        events.extend(person_events(100, 2, &phone_b, &email_b));
        let other: Vec<StoredEvent> = events.iter().filter(|e| e.id >= 100).cloned().collect();
        let plan = plan_erasure(&facts(1, events, Vec::new()), &AuditContext::system());
        for e in &other {
            prop_assert!(plan.scrubbed_events.iter().all(|(id, _)| *id != e.id), "event {} changed", e.id);
            prop_assert!(!plan.forget_answers_to.contains(&e.id));
        }
        prop_assert_eq!(plan.scrubbed_events.len(), 3);
        for (_, payload) in &plan.scrubbed_events {
            prop_assert!(!payload.contains(&phone_a) && !payload.contains(&email_a), "{}", payload);
        }
    }
}
