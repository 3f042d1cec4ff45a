//! The JSON Schema of each tool's result (MCP `outputSchema`), generated from the result types
//! themselves so it cannot drift from what the tools return.

use schemars::JsonSchema;
use serde_json::{json, Value};

use super::model::{ChannelAnalytics, ChannelList, ContactAnalytics, WebhookList, WorkspaceOverview};
use super::registry::ToolName;
use crate::docs::SearchResult;
use crate::reports::ConversationReport;

/// The schema of `tool`'s result. With `compressed_overview` (`co_admin.compress_overview`), the
/// overview's count sections may omit their zero counts, so their fields are not required there.
pub fn output_schema(tool: ToolName, compressed_overview: bool) -> Value {
    let mut schema = match tool {
        ToolName::GetWorkspaceOverview => schema_of::<WorkspaceOverview>(),
        ToolName::ListChannels => schema_of::<ChannelList>(),
        ToolName::ListWebhooks => schema_of::<WebhookList>(),
        ToolName::GetChannelAnalytics => schema_of::<ChannelAnalytics>(),
        ToolName::GetContactAnalytics => schema_of::<ContactAnalytics>(),
        ToolName::SearchProductDocs => schema_of::<SearchResult>(),
        ToolName::GetConversationReport => schema_of::<ConversationReport>(),
    };
    if tool == ToolName::GetWorkspaceOverview && compressed_overview {
        allow_compression(&mut schema);
    }
    if let Value::Object(top) = &mut schema {
        // MCP wants an object schema at the top; the results that are one of two shapes
        // (`anyOf`) are objects either way.
        top.entry("type").or_insert_with(|| json!("object"));
    }
    schema
}

/// The schema of what `T` serialises to (an output, never parsed back): a field skipped when
/// empty (`skip_serializing_if`) is not required.
fn schema_of<T: JsonSchema>() -> Value {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// `compress_overview` drops zero counts inside the count sections and adds two fields.
fn allow_compression(schema: &mut Value) {
    if let Some(defs) = schema.get_mut("$defs").and_then(Value::as_object_mut) {
        for (name, def) in defs.iter_mut() {
            if name != "OverviewWorkspace" {
                if let Some(o) = def.as_object_mut() {
                    o.remove("required");
                }
            }
        }
    }
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert(
            "compressed".into(),
            json!({"type": "boolean", "description": "Set when zero counts were omitted (a missing count is 0)."}),
        );
        props.insert("compression".into(), json!({"type": "string", "description": "What was omitted."}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assistant::TOOLS;

    #[test]
    fn every_tool_has_an_object_schema_with_its_fields() {
        for t in &TOOLS {
            let s = output_schema(t.tool, false);
            assert_eq!(s["type"], "object", "{}", t.name);
        }
        let docs = output_schema(ToolName::SearchProductDocs, false);
        assert!(docs["required"].as_array().is_some_and(|r| r.contains(&json!("hits"))), "{docs}");
        let hit = &docs["$defs"]["SearchHit"];
        assert!(hit["required"].as_array().is_some_and(|r| r.contains(&json!("url"))), "{hit}");
        let report = &output_schema(ToolName::GetContactAnalytics, false)["$defs"]["ContactReport"];
        assert!(report["required"].as_array().is_some_and(|r| !r.contains(&json!("notes"))), "{report}");
        let report = output_schema(ToolName::GetConversationReport, false);
        let group = &report["$defs"]["ReportGroup"];
        assert!(group["required"].as_array().is_some_and(|r| r.contains(&json!("first_response_ai"))), "{group}");
        let channels = output_schema(ToolName::GetChannelAnalytics, false);
        assert!(channels["anyOf"].as_array().is_some_and(|a| a.len() == 2), "{channels}");
    }

    #[test]
    fn compressed_overviews_may_omit_counts() {
        let strict = output_schema(ToolName::GetWorkspaceOverview, false);
        let loose = output_schema(ToolName::GetWorkspaceOverview, true);
        assert!(strict["$defs"]["WebhookCounts"]["required"].is_array());
        assert!(loose["$defs"]["WebhookCounts"]["required"].is_null());
        assert_eq!(loose["properties"]["compressed"]["type"], "boolean");
    }
}
