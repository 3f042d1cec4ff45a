//! Unit tests of the tool registry: parsing calls and the generated manifest.

use super::*;
use serde_json::json;

#[test]
fn table_order_matches_the_enum() {
    for (i, t) in TOOLS.iter().enumerate() {
        assert_eq!(t.tool as usize, i, "{}", t.name);
        assert_eq!(ToolName::parse(t.name), Some(t.tool));
        assert_eq!(serde_json::to_value(t.tool).ok(), Some(json!(t.name)));
    }
}

#[test]
fn unknown_tool_is_named() {
    let e = ToolCall::parse("drop_tables", &json!({})).err().unwrap_or_default();
    assert_eq!(e.0[0].field, "tool");
    assert!(e.0[0].message.contains("drop_tables"));
}

#[test]
fn channel_analytics_defaults_to_seven_days_of_all_channels() {
    assert_eq!(
        ToolCall::parse("get_channel_analytics", &json!({})).ok(),
        Some(ToolCall::ChannelAnalytics { channel_id: None, range: "7d".into(), days: 7 })
    );
    let e = ToolCall::parse("get_channel_analytics", &json!({"range": "365d"})).err().unwrap_or_default();
    assert_eq!(e.0[0].field, "range");
}

#[test]
fn contact_phone_is_normalised_and_range_bounded() {
    let Ok(ToolCall::ContactAnalytics(q)) =
        ToolCall::parse("get_contact_analytics", &json!({"phone_number": "+1 (555) 000-0001", "range": "45d"}))
    else {
        panic!("valid call refused");
    };
    assert_eq!(q.phone.as_ref().map(E164Phone::as_str), Some("+15550000001"));
    assert_eq!(q.days, 45);
    for bad in ["6d", "91d", "30", "d", "1000d"] {
        let e = ToolCall::parse("get_contact_analytics", &json!({"email": "a@b.co", "range": bad}));
        assert_eq!(e.err().map(|e| e.0[0].field.clone()).as_deref(), Some("range"), "{bad}");
    }
    let e = ToolCall::parse("get_contact_analytics", &json!({"phone_number": "555-0001"})).err();
    assert_eq!(e.map(|e| e.0[0].field.clone()).as_deref(), Some("phone_number"));
}

#[test]
fn contact_lookup_without_phone_or_email_is_valid() {
    let Ok(ToolCall::ContactAnalytics(q)) =
        ToolCall::parse("get_contact_analytics", &json!({"name": "Maria", "email": "  "}))
    else {
        panic!("a name-only call must reach the tool, which asks for an identifier");
    };
    assert_eq!((q.phone, q.email, q.days), (None, None, 30));
}

#[test]
fn docs_query_must_not_be_blank() {
    let e = ToolCall::parse("search_product_docs", &json!({"query": "  "})).err().unwrap_or_default();
    assert_eq!(e.0[0].field, "query");
    assert_eq!(
        ToolCall::parse("search_product_docs", &json!({"query": "webhooks"})).ok(),
        Some(ToolCall::SearchProductDocs { query: "webhooks".into(), limit: 5 })
    );
}

#[test]
fn conversation_report_takes_the_rest_query() {
    assert_eq!(
        ToolCall::parse("get_conversation_report", &json!({})).ok(),
        Some(ToolCall::ConversationReport(RawReportQuery {
            since: None,
            until: None,
            group_by: Some("none".into()),
            business_hours: Some("false".into()),
        }))
    );
    let args = json!({"since": "2026-11-01", "until": "2026-11-02T06:00:00+01:00", "group_by": "label",
        "business_hours": true});
    assert_eq!(
        ToolCall::parse("get_conversation_report", &args).ok(),
        Some(ToolCall::ConversationReport(RawReportQuery {
            since: Some("2026-11-01".into()),
            until: Some("2026-11-02T06:00:00+01:00".into()),
            group_by: Some("label".into()),
            business_hours: Some("true".into()),
        }))
    );
    for (bad, field) in [
        (json!({"group_by": "inbox"}), "group_by"),
        (json!({"business_hours": "yes"}), "business_hours"),
        (json!({"since": 20261101}), "since"),
        (json!({"until": "x".repeat(41)}), "until"),
    ] {
        let e = ToolCall::parse("get_conversation_report", &bad).err().unwrap_or_default();
        assert_eq!(e.0.iter().map(|f| f.field.as_str()).collect::<Vec<_>>(), [field], "{bad}");
    }
    let description = ToolName::GetConversationReport.spec().description;
    assert!(description.contains(&format!("{} days", crate::reports::MAX_PERIOD_DAYS)), "{description}");
}
