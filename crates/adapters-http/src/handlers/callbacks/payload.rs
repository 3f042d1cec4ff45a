//! The platforms' callback payloads, turned into [`PlatformEvents`] per platform account. Only
//! the parts wms uses are read; anything else is ignored, never an error.

use std::collections::HashMap;

use domain::channels::ChannelType;
use domain::connectors::{from_unix, InboundMessage, PlatformEvents, StatusUpdate, WatermarkUpdate};
use domain::messaging::MessageStatus;
use serde_json::Value;
use time::OffsetDateTime;

/// The events of a callback body, grouped by the platform account they are for.
pub fn parse(channel_type: ChannelType, body: &Value) -> Vec<(String, PlatformEvents)> {
    let expected = match channel_type {
        ChannelType::Whatsapp => "whatsapp_business_account",
        ChannelType::Messenger => "page",
        ChannelType::Instagram => "instagram",
    };
    if body["object"].as_str() != Some(expected) {
        return Vec::new();
    }
    let entries = body["entry"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut out: Vec<(String, PlatformEvents)> = Vec::new();
    // Where each account is in `out`: a body naming 20,000 accounts must not cost a linear
    // search per entry (issue: quadratic dedupe before the signature was checked).
    let mut index: HashMap<String, usize> = HashMap::new();
    for entry in entries {
        let parsed = match channel_type {
            ChannelType::Whatsapp => whatsapp_entry(entry),
            ChannelType::Messenger | ChannelType::Instagram => messaging_entry(entry),
        };
        for (account, events) in parsed {
            match index.get(&account) {
                Some(&i) => {
                    let e = &mut out[i].1;
                    e.statuses.extend(events.statuses);
                    e.watermarks.extend(events.watermarks);
                    e.inbound.extend(events.inbound);
                }
                None => {
                    index.insert(account.clone(), out.len());
                    out.push((account, events));
                }
            }
        }
    }
    out
}

/// Replaces the NUL character in every string (and member name) of `body` with U+FFFD: a
/// platform may send one (JSON allows `\u0000`), PostgreSQL can store none, and one such message
/// must not refuse the whole callback, which the platform would then retry forever.
pub fn without_nul(body: &mut Value) {
    const REPLACEMENT: &str = "\u{FFFD}";
    match body {
        Value::String(s) if s.contains('\0') => *s = s.replace('\0', REPLACEMENT),
        Value::Array(items) => items.iter_mut().for_each(without_nul),
        Value::Object(members) => {
            if members.keys().any(|k| k.contains('\0')) {
                let old = std::mem::take(members);
                members.extend(old.into_iter().map(|(k, v)| (k.replace('\0', REPLACEMENT), v)));
            }
            members.values_mut().for_each(without_nul);
        }
        _ => {}
    }
}

fn secs(v: &Value) -> Option<OffsetDateTime> {
    let n = v.as_i64().or_else(|| v.as_str().and_then(|s| s.parse().ok()))?;
    from_unix(n)
}

/// Messenger's and Instagram's timestamps: milliseconds, all of them kept (a message's
/// `created_at` is the platform's time, and the service window counts from it).
fn millis(v: &Value) -> Option<OffsetDateTime> {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(v.as_i64()?) * 1_000_000).ok()
}

fn status(s: &str) -> Option<MessageStatus> {
    match s {
        "sent" => Some(MessageStatus::Sent),
        "delivered" => Some(MessageStatus::Delivered),
        "read" => Some(MessageStatus::Read),
        "failed" => Some(MessageStatus::Failed),
        _ => None,
    }
}

/// WhatsApp Cloud API: `entry[].changes[].value` with `metadata.phone_number_id`, `messages[]`,
/// `contacts[]` and `statuses[]`.
fn whatsapp_entry(entry: &Value) -> Vec<(String, PlatformEvents)> {
    let mut out = Vec::new();
    for change in entry["changes"].as_array().map(Vec::as_slice).unwrap_or_default() {
        let value = &change["value"];
        let Some(account) = value["metadata"]["phone_number_id"].as_str() else { continue };
        let mut events = PlatformEvents::default();
        let contacts = value["contacts"].as_array().map(Vec::as_slice).unwrap_or_default();
        for m in value["messages"].as_array().map(Vec::as_slice).unwrap_or_default() {
            let (Some(from), Some(id), Some(at)) = (m["from"].as_str(), m["id"].as_str(), secs(&m["timestamp"])) else {
                continue;
            };
            let Ok(phone) = domain::contacts::E164Phone::new("from", &format!("+{}", from.trim_start_matches('+')))
            else {
                continue;
            };
            let kind = m["type"].as_str().unwrap_or("unknown");
            let text = match kind {
                "text" => m["text"]["body"].as_str().map(str::to_owned),
                "button" => m["button"]["text"].as_str().map(str::to_owned),
                "interactive" => m["interactive"]["button_reply"]["title"]
                    .as_str()
                    .or_else(|| m["interactive"]["list_reply"]["title"].as_str())
                    .map(str::to_owned),
                _ => None,
            }
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| format!("[{kind}]"));
            let name = contacts
                .iter()
                .find(|c| c["wa_id"].as_str() == Some(from))
                .and_then(|c| c["profile"]["name"].as_str())
                .map(|n| n.chars().take(200).collect());
            events.inbound.push(InboundMessage {
                platform_message_id: id.to_owned(),
                from: phone.as_str().to_owned(),
                name,
                text: text.chars().take(4096).collect(),
                at,
            });
        }
        for s in value["statuses"].as_array().map(Vec::as_slice).unwrap_or_default() {
            let (Some(id), Some(st), Some(at)) =
                (s["id"].as_str(), s["status"].as_str().and_then(status), secs(&s["timestamp"]))
            else {
                continue;
            };
            let error = s["errors"][0].as_object().map(|e| {
                let code = e.get("code").and_then(Value::as_i64).map(|c| format!("{c}: ")).unwrap_or_default();
                let title = e.get("title").and_then(Value::as_str).unwrap_or("failed");
                let detail = e
                    .get("error_data")
                    .and_then(|d| d["details"].as_str())
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default();
                format!("{code}{title}{detail}")
            });
            events.statuses.push(StatusUpdate { platform_message_id: id.to_owned(), status: st, at, error });
        }
        out.push((account.to_owned(), events));
    }
    out
}

/// Messenger and Instagram: `entry[].id` is the page/account, `entry[].messaging[]` holds
/// messages, deliveries (by message ids and a watermark) and reads (a watermark, or a message id on
/// Instagram). Echoes of our own messages are skipped.
fn messaging_entry(entry: &Value) -> Vec<(String, PlatformEvents)> {
    let Some(account) = entry["id"].as_str() else { return Vec::new() };
    let mut events = PlatformEvents::default();
    for m in entry["messaging"].as_array().map(Vec::as_slice).unwrap_or_default() {
        let Some(sender) = m["sender"]["id"].as_str() else { continue };
        let at = millis(&m["timestamp"]).unwrap_or_else(OffsetDateTime::now_utc);
        if let Some(msg) = m["message"].as_object() {
            if msg.get("is_echo").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            let Some(mid) = msg.get("mid").and_then(Value::as_str) else { continue };
            let text = msg
                .get("text")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
                .unwrap_or_else(|| "[attachment]".to_owned());
            events.inbound.push(InboundMessage {
                platform_message_id: mid.to_owned(),
                from: sender.to_owned(),
                name: None,
                text: text.chars().take(4096).collect(),
                at,
            });
        }
        if let Some(d) = m["delivery"].as_object() {
            for mid in d.get("mids").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
                if let Some(mid) = mid.as_str() {
                    events.statuses.push(StatusUpdate {
                        platform_message_id: mid.to_owned(),
                        status: MessageStatus::Delivered,
                        at,
                        error: None,
                    });
                }
            }
            if let Some(w) = d.get("watermark").and_then(millis) {
                events.watermarks.push(WatermarkUpdate {
                    contact: sender.to_owned(),
                    status: MessageStatus::Delivered,
                    watermark: w,
                });
            }
        }
        if let Some(r) = m["read"].as_object() {
            if let Some(mid) = r.get("mid").and_then(Value::as_str) {
                events.statuses.push(StatusUpdate {
                    platform_message_id: mid.to_owned(),
                    status: MessageStatus::Read,
                    at,
                    error: None,
                });
            }
            if let Some(w) = r.get("watermark").and_then(millis) {
                events.watermarks.push(WatermarkUpdate {
                    contact: sender.to_owned(),
                    status: MessageStatus::Read,
                    watermark: w,
                });
            }
        }
    }
    vec![(account.to_owned(), events)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whatsapp_messages_and_statuses_are_read() {
        let body = json!({"object": "whatsapp_business_account", "entry": [{"id": "waba", "changes": [{"field": "messages", "value": {
            "metadata": {"phone_number_id": "pn1"},
            "contacts": [{"profile": {"name": "Ann"}, "wa_id": "14155550123"}],
            "messages": [{"from": "14155550123", "id": "wamid.in", "timestamp": "1700000000", "type": "text", "text": {"body": "hi"}},
                         {"from": "14155550123", "id": "wamid.img", "timestamp": "1700000001", "type": "image", "image": {}}],
            "statuses": [{"id": "wamid.out", "status": "failed", "timestamp": "1700000002", "recipient_id": "14155550123",
                          "errors": [{"code": 131026, "title": "Message undeliverable"}]}]}}]}]});
        let parsed = parse(ChannelType::Whatsapp, &body);
        assert_eq!(parsed.len(), 1);
        let (account, e) = &parsed[0];
        assert_eq!(account, "pn1");
        assert_eq!(e.inbound[0].from, "+14155550123");
        assert_eq!(e.inbound[0].name.as_deref(), Some("Ann"));
        assert_eq!(e.inbound[1].text, "[image]");
        assert_eq!(e.statuses[0].status, MessageStatus::Failed);
        assert_eq!(e.statuses[0].error.as_deref(), Some("131026: Message undeliverable"));
    }

    #[test]
    fn the_nul_character_is_replaced_everywhere() {
        let mut body = json!({"a": ["x\u{0}y", {"k\u{0}": "\u{0}"}], "n": 1});
        without_nul(&mut body);
        assert_eq!(body, json!({"a": ["x\u{FFFD}y", {"k\u{FFFD}": "\u{FFFD}"}], "n": 1}));
    }

    #[test]
    fn messenger_deliveries_reads_and_echoes() {
        let body = json!({"object": "page", "entry": [{"id": "page1", "time": 1, "messaging": [
            {"sender": {"id": "psid1"}, "recipient": {"id": "page1"}, "timestamp": 1700000000000i64, "message": {"mid": "m1", "text": "yo"}},
            {"sender": {"id": "page1"}, "recipient": {"id": "psid1"}, "timestamp": 1700000000000i64, "message": {"mid": "m2", "text": "echo", "is_echo": true}},
            {"sender": {"id": "psid1"}, "recipient": {"id": "page1"}, "timestamp": 1700000001000i64, "delivery": {"mids": ["m3"], "watermark": 1700000001000i64}},
            {"sender": {"id": "psid1"}, "recipient": {"id": "page1"}, "timestamp": 1700000002000i64, "read": {"watermark": 1700000002000i64}}]}]});
        let parsed = parse(ChannelType::Messenger, &body);
        let e = &parsed[0].1;
        assert_eq!(e.inbound.len(), 1);
        assert_eq!(e.inbound[0].at, OffsetDateTime::from_unix_timestamp(1_700_000_000).expect("time"));
        assert_eq!(e.statuses.len(), 1);
        assert_eq!(
            e.watermarks.iter().map(|w| w.status).collect::<Vec<_>>(),
            [MessageStatus::Delivered, MessageStatus::Read]
        );
    }

    #[test]
    fn messenger_timestamps_keep_their_milliseconds() {
        let body = json!({"object": "instagram", "entry": [{"id": "ig1", "time": 1, "messaging": [
            {"sender": {"id": "igsid"}, "recipient": {"id": "ig1"}, "timestamp": 1_795_821_598_456i64, "message": {"mid": "m1", "text": "yo"}}]}]});
        let parsed = parse(ChannelType::Instagram, &body);
        let at = parsed[0].1.inbound[0].at;
        assert_eq!(at.unix_timestamp_nanos(), 1_795_821_598_456_000_000);
    }

    #[test]
    fn other_objects_and_junk_give_nothing() {
        assert!(parse(ChannelType::Whatsapp, &json!({"object": "page", "entry": []})).is_empty());
        assert!(parse(ChannelType::Instagram, &json!([1, 2])).is_empty());
        assert!(parse(
            ChannelType::Whatsapp,
            &json!({"object": "whatsapp_business_account", "entry": [{"changes": [{"value": {}}]}]})
        )
        .is_empty());
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-z0-9._]{0,8}".prop_map(Value::from),
            prop_oneof![Just("whatsapp_business_account"), Just("page"), Just("instagram"), Just("text"), Just("read")]
                .prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 64, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::btree_map(
                    prop_oneof![
                        Just("object".to_owned()),
                        Just("entry".to_owned()),
                        Just("changes".to_owned()),
                        Just("value".to_owned()),
                        Just("metadata".to_owned()),
                        Just("phone_number_id".to_owned()),
                        Just("messages".to_owned()),
                        Just("statuses".to_owned()),
                        Just("messaging".to_owned()),
                        Just("id".to_owned()),
                        Just("timestamp".to_owned()),
                        Just("from".to_owned()),
                        "[a-z_]{1,8}",
                    ],
                    inner,
                    0..6,
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Any JSON, on any platform, parses without panicking into accounts named once each.
        #[test]
        fn any_json_parses_without_panic(v in json_value(), platform in 0..3usize) {
            let p = [ChannelType::Whatsapp, ChannelType::Messenger, ChannelType::Instagram][platform];
            let parsed = parse(p, &v);
            let distinct: std::collections::HashSet<&String> = parsed.iter().map(|(a, _)| a).collect();
            proptest::prop_assert_eq!(distinct.len(), parsed.len());
        }

        /// Round trip: the accounts of a body come out once each, in the order first named.
        #[test]
        fn accounts_come_out_once_in_order(accounts in proptest::collection::vec("[0-9]{1,4}", 0..40)) {
            let entry: Vec<Value> = accounts.iter().map(|a| json!({"id": a, "messaging": []})).collect();
            let parsed = parse(ChannelType::Messenger, &json!({"object": "page", "entry": entry}));
            let mut expected: Vec<&String> = Vec::new();
            for a in &accounts {
                if !expected.contains(&a) {
                    expected.push(a);
                }
            }
            proptest::prop_assert_eq!(parsed.iter().map(|(a, _)| a).collect::<Vec<_>>(), expected);
        }
    }
}
