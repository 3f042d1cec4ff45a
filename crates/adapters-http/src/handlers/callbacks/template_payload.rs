//! Meta's `message_template_status_update` callbacks (WhatsApp): the template status changes of a
//! body, grouped by the WhatsApp Business Account (`entry[].id`) they are for. Anything else is
//! ignored, never an error.

use std::collections::HashMap;

use domain::connectors::templates::{TemplateStatus, TemplateStatusChange};
use serde_json::Value;

/// The template status changes of a WhatsApp callback body by WABA id, each WABA once, in order
/// (a WABA with status updates none of which changes a status is there with no changes).
pub fn template_updates(body: &Value) -> Vec<(String, Vec<TemplateStatusChange>)> {
    if body["object"].as_str() != Some("whatsapp_business_account") {
        return Vec::new();
    }
    let mut out: Vec<(String, Vec<TemplateStatusChange>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for entry in body["entry"].as_array().map(Vec::as_slice).unwrap_or_default() {
        let Some(waba) = entry["id"].as_str() else { continue };
        let updates: Vec<&Value> = entry["changes"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter(|c| c["field"].as_str() == Some("message_template_status_update"))
            .collect();
        if updates.is_empty() {
            continue;
        }
        // A WABA whose updates change nothing that wms keeps (a lock, say) is still named, so the
        // body is verified and answered 200 like any other of Meta's.
        let changes: Vec<TemplateStatusChange> = updates.iter().filter_map(|c| change_of(&c["value"])).collect();
        match index.get(waba) {
            Some(&i) => out[i].1.extend(changes),
            None => {
                index.insert(waba.to_owned(), out.len());
                out.push((waba.to_owned(), changes));
            }
        }
    }
    out
}

fn change_of(v: &Value) -> Option<TemplateStatusChange> {
    let reason = v["reason"].as_str().filter(|r| !r.is_empty() && *r != "NONE").map(str::to_owned);
    Some(TemplateStatusChange {
        name: v["message_template_name"].as_str()?.to_owned(),
        language: v["message_template_language"].as_str().map(str::to_owned),
        status: TemplateStatus::of_event(v["event"].as_str()?)?,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn status_updates_are_read_by_waba() {
        let body = json!({"object": "whatsapp_business_account", "entry": [
            {"id": "waba-1", "time": 1, "changes": [
                {"field": "message_template_status_update", "value": {"event": "REJECTED", "message_template_id": 1,
                    "message_template_name": "order_update", "message_template_language": "en_US", "reason": "INCORRECT_CATEGORY"}},
                {"field": "messages", "value": {}}
            ]},
            {"id": "waba-1", "changes": [{"field": "message_template_status_update", "value": {"event": "APPROVED",
                "message_template_name": "welcome", "message_template_language": "de", "reason": "NONE"}}]}
        ]});
        let updates = template_updates(&body);
        assert_eq!(updates.len(), 1);
        let (waba, changes) = &updates[0];
        assert_eq!(waba, "waba-1");
        assert_eq!(changes[0].status, TemplateStatus::Rejected);
        assert_eq!(changes[0].reason.as_deref(), Some("INCORRECT_CATEGORY"));
        assert_eq!(
            (changes[1].name.as_str(), changes[1].status, changes[1].reason.as_deref()),
            ("welcome", TemplateStatus::Approved, None)
        );
    }

    #[test]
    fn events_about_something_else_than_sending_are_left_out() {
        let change = |event: &str| {
            json!({"field": "message_template_status_update", "value": {"event": event,
            "message_template_name": "order_update", "message_template_language": "en_US"}})
        };
        let body = json!({"object": "whatsapp_business_account", "entry": [{"id": "waba-1", "changes": [
            change("LOCKED"), change("REINSTATED"), change("UNLOCKED")]}]});
        let updates = template_updates(&body);
        let statuses: Vec<TemplateStatus> = updates[0].1.iter().map(|c| c.status).collect();
        assert_eq!(statuses, [TemplateStatus::Approved]);
        let locked =
            json!({"object": "whatsapp_business_account", "entry": [{"id": "waba-2", "changes": [change("LOCKED")]}]});
        assert_eq!(template_updates(&locked), [("waba-2".to_owned(), vec![])], "still named, changing nothing");
    }

    #[test]
    fn other_objects_and_junk_give_nothing() {
        assert!(template_updates(&json!({"object": "page", "entry": [{"id": "1"}]})).is_empty());
        assert!(template_updates(&json!({"object": "whatsapp_business_account", "entry": [{"changes": 3}]})).is_empty());
        assert!(template_updates(&json!(null)).is_empty());
    }
}
