//! The recipient of a send that names an address (a phone or a platform user id) rather than a
//! thread: which recipients a send may create, and the records and events of those it creates.
//! The adapter finds the contacts and threads inside the send's transaction, asks these rules and
//! writes what they say.

use std::collections::HashSet;
use std::hash::Hash;

use time::OffsetDateTime;

use super::window::WindowNeed;
use crate::contacts::Contact;
use crate::threads::{Thread, ThreadRecord};
use crate::webhooks::DomainEvent;

/// Whether a send may create its recipient's contact and thread when they do not exist yet: only a
/// template opens a conversation. Any other send needs the contact's service window, which a
/// recipient without a thread has not ([`super::window::admit`] refuses it), so its recipient is
/// only looked up.
pub fn opens_conversation(need: WindowNeed) -> bool {
    need == WindowNeed::Template
}

/// The recipients (contacts by address, or threads by contact) of `wanted` to create, in its
/// order: those not `found` that a send which opens a conversation addresses (`opening`).
pub fn recipients_to_create<T: Copy + Eq + Hash>(
    wanted: &[T],
    found: impl Fn(T) -> bool,
    opening: &HashSet<T>,
) -> Vec<T> {
    wanted.iter().copied().filter(|r| !found(*r) && opening.contains(r)).collect()
}

/// The record of a contact a send created for `address` at `at` (the transaction's time), as the
/// insert wrote it: the address is its phone on a channel that addresses contacts by phone, and
/// nothing on the others (a platform user id is no part of the record); it was created, changed
/// and first contacted at `at`, and has not written yet.
pub fn created_contact(id: i64, address: &str, by_phone: bool, at: OffsetDateTime) -> Contact {
    Contact {
        id,
        name: None,
        phone: by_phone.then(|| address.to_owned()),
        email: None,
        country: None,
        language: None,
        note: None,
        created_at: at,
        updated_at: at,
        first_contacted_at: Some(at),
        last_contacted_at: None,
    }
}

/// `contact.created` for a contact a send created, once per contact: by the transaction that
/// inserted it (a concurrent send that found it already inserted announces nothing).
pub fn contact_created(contact: Contact) -> DomainEvent {
    DomainEvent::ContactCreated(contact)
}

/// The record of a thread a send created unassigned at `at` (the transaction's time) with the
/// status the insert gave it: no message read yet, its activity the time of the message it was
/// created for (inserted in the same transaction), no labels, and no SLA (only a contact's
/// message starts a cycle).
pub fn created_thread(id: i64, channel_id: i64, contact_id: i64, status: &str, at: OffsetDateTime) -> ThreadRecord {
    ThreadRecord::from(Thread {
        id,
        channel_id,
        contact_id,
        status: status.to_owned(),
        unread_count: 0,
        assignee: None,
        handover_status: None,
        last_message_at: Some(at),
        created_at: at,
        labels: Vec::new(),
        snoozed_until: None,
        status_reason: None,
        team_id: None,
        assigned_at: None,
        assignment_reason: None,
        latest_inbound_at: None,
        sla: None,
    })
}

/// `thread.created` for a thread a send created, with its record once placed with its channel's
/// team (which it carries, so no `thread.assigned` follows in that transaction).
pub fn thread_created(thread: ThreadRecord) -> DomainEvent {
    DomainEvent::ThreadCreated(thread)
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    const AT: OffsetDateTime = datetime!(2026-11-27 09:00:00 UTC);

    #[test]
    fn only_a_template_send_opens_a_conversation() {
        assert!(opens_conversation(WindowNeed::Template));
        assert!(!opens_conversation(WindowNeed::FreeText));
        assert!(!opens_conversation(WindowNeed::HumanAgent));
    }

    #[test]
    fn only_missing_recipients_of_opening_sends_are_created_in_order() {
        let found: HashSet<&str> = ["+2"].into();
        let opening: HashSet<&str> = ["+1", "+2", "+4"].into();
        let create = recipients_to_create(&["+1", "+2", "+3", "+4"], |a| found.contains(a), &opening);
        assert_eq!(create, ["+1", "+4"], "+2 exists, +3 is addressed by free text only");
        assert!(recipients_to_create(&[5_i64, 6], |_| false, &HashSet::new()).is_empty());
    }

    #[test]
    fn a_created_contact_has_its_phone_only_when_addressed_by_phone() {
        let by_phone = created_contact(3, "+14155550123", true, AT);
        assert_eq!(by_phone.phone.as_deref(), Some("+14155550123"));
        assert_eq!((by_phone.created_at, by_phone.updated_at, by_phone.first_contacted_at), (AT, AT, Some(AT)));
        assert_eq!((by_phone.name, by_phone.last_contacted_at), (None, None));
        assert_eq!(created_contact(3, "psid-1", false, AT).phone, None);
        assert_eq!(
            contact_created(created_contact(3, "+1", true, AT)),
            DomainEvent::ContactCreated(created_contact(3, "+1", true, AT))
        );
    }

    #[test]
    fn a_created_thread_is_unassigned_with_its_message_time_and_no_sla() {
        let record = created_thread(8, 2, 3, "open", AT);
        assert_eq!((record.id, record.channel_id, record.contact_id, record.status.as_str()), (8, 2, 3, "open"));
        assert_eq!((record.created_at, record.last_message_at, record.unread_count), (AT, Some(AT), 0));
        assert_eq!((record.assignee, record.team_id, record.assigned_at), (None, None, None));
        assert!(record.labels.is_empty() && record.sla.is_none());
        assert_eq!(
            thread_created(created_thread(8, 2, 3, "open", AT)),
            DomainEvent::ThreadCreated(created_thread(8, 2, 3, "open", AT))
        );
    }
}
