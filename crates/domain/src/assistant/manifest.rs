//! The capabilities manifest (`docs/assistant.md`, "One registry, three faces"): what the assistant
//! can and cannot do, its tools with their schemas, the routing groups and the tool-choice guidance,
//! ready for a system prompt.

use serde::Serialize;
use serde_json::Value;

use super::registry::{ToolGroup, TOOLS};

/// One tool as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ManifestTool {
    /// snake_case name.
    pub name: &'static str,
    /// Short human title.
    pub title: &'static str,
    /// What it does and when to use it.
    pub description: &'static str,
    /// `live_data` or `product_docs`.
    pub group: ToolGroup,
    /// JSON Schema of its arguments.
    pub input_schema: Value,
}

/// Which tool answers which kind of question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolChoice {
    /// The kind of question.
    pub question: &'static str,
    /// The tool to call, or null when no tool can do it.
    pub tool: Option<&'static str>,
}

/// Tool-choice guidance in two forms: rules for code, text for a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Guidance {
    /// Question kind → tool.
    pub rules: Vec<ToolChoice>,
    /// The same rules and the assistant's obligations as text for a system prompt.
    pub prompt: String,
}

/// The whole manifest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Manifest {
    /// What the assistant can do.
    pub can: Vec<&'static str>,
    /// What it cannot do, and where the user goes instead.
    pub cannot: Vec<&'static str>,
    /// Every tool with its schema.
    pub tools: Vec<ManifestTool>,
    /// Names of the tools that read live workspace data.
    pub live_data: Vec<&'static str>,
    /// Names of the tools that search the documentation.
    pub product_docs: Vec<&'static str>,
    /// Which tool to choose.
    pub guidance: Guidance,
}

const CAN: &[&str] = &[
    "Summarise the workspace: channels per type and how many are connected, webhook destinations, inbox threads \
     and unread messages per status, AI agents, labels and active team members (get_workspace_overview).",
    "List the WhatsApp, Messenger and Instagram channels with their ids, identifiers and status (list_channels).",
    "List outbound webhook destinations with URL, platform, subscribed events and active flag (list_webhooks).",
    "Report WhatsApp sent, delivered, read and failed messages, delivery and read rates and a daily series over \
     7, 14, 30, 60 or 90 days, for one WhatsApp channel or all of them (get_channel_analytics).",
    "Give insights on one customer found by e-mail or phone number: profile, threads, activity, estimated cost, \
     labels, support team and conversations, as aggregates and metadata (get_contact_analytics).",
    "Answer how-to, what-is and setup questions from the product documentation (search_product_docs).",
    "Report how fast the team answers over a period: conversations, messages, resolutions, first response (members \
     and AI agents apart), reply and resolution times as average, median and p90, and SLAs hit and missed, for the \
     workspace or per member, team, label or channel, in wall-clock or business hours; for workspace admins \
     (get_conversation_report).",
];

const CANNOT: &[&str] = &[
    "Create, edit, activate, deactivate or delete webhooks, or reveal or rotate their secrets: point the user to \
     the integrations settings at /settings/integrations/webhooks.",
    "Create, revoke or delete API keys: point the user to /settings/workspace/api-keys.",
    "Change anything at all: connect or edit channels, assign, resolve or label threads, edit contacts or send \
     messages. Every tool is read-only.",
    "Export CSV files or the top-countries breakdown: point the user to the Analytics page at /analytics.",
    "Read, quote or summarise message transcripts: results hold aggregates and metadata only.",
    "Find a customer by name: it needs an e-mail address or a phone number and asks for one instead of guessing.",
    "Show detailed delivery statistics for Messenger or Instagram channels: point the user to \
     /docs/analytics-messenger-instagram (where Meta shows those insights) and /analytics.",
    "See data of any workspace other than the current one.",
];

const RULES: &[(&str, Option<&str>)] = &[
    ("How to do something, what something is, setup questions", Some("search_product_docs")),
    (
        "Several counts at once (channels, webhooks, threads, unread, agents, labels, team)",
        Some("get_workspace_overview"),
    ),
    ("Channel details: which numbers or accounts exist, ids, connection status", Some("list_channels")),
    ("The list of webhook destinations and which are active", Some("list_webhooks")),
    ("WhatsApp delivery, read and failure figures and rates", Some("get_channel_analytics")),
    ("A specific customer identified by e-mail or phone number", Some("get_contact_analytics")),
    (
        "Response, reply and resolution times, conversation volumes and SLAs over a period, per member, team, label \
         or channel",
        Some("get_conversation_report"),
    ),
    ("Creating or editing webhooks or anything else", None),
];

fn prompt() -> String {
    let mut p = String::from(
        "You answer questions about the user's wms workspace with read-only tools. Choose the tool by the kind of \
         question:\n",
    );
    for (question, tool) in RULES {
        match tool {
            Some(t) => p.push_str(&format!("- {question}: call {t}.\n")),
            None => p.push_str(&format!(
                "- {question}: no tool can do this; say so and point to the settings page (webhooks: \
                 /settings/integrations/webhooks).\n"
            )),
        }
    }
    p.push_str(
        "Rules:\n\
         - To look up a customer you need an e-mail address or a phone number; a name alone is not enough. Ask for \
         one and never guess a contact.\n\
         - For a Messenger or Instagram channel, get_channel_analytics returns a note instead of figures: pass the \
         note on, with its link to /docs/analytics-messenger-instagram (where Meta shows those platforms' insights).\n\
         - Every search_product_docs hit has a url (/docs/<slug>#<section>): give it to the user as the link to read \
         more.\n\
         - Rates are fractions: delivery rate = delivered / sent, read rate = read / delivered; null means there was \
         nothing to divide by.\n\
         - Never claim to have changed anything, and never invent figures or pages the tools did not return. When \
         search_product_docs has no hits, say so and suggest the closest settings page or a rephrased question.\n\
         - get_conversation_report is for workspace admins (and API keys with reports:read); when it is refused, \
         say that a workspace admin can read the report, and do not estimate its figures from other tools. Its \
         durations are seconds: give them in minutes or hours.\n\
         - There is no CSV export through the tools; exports are on /analytics.\n",
    );
    p
}

/// The manifest, generated from the registry.
pub fn manifest() -> Manifest {
    let names = |g: ToolGroup| TOOLS.iter().filter(|t| t.group == g).map(|t| t.name).collect::<Vec<_>>();
    Manifest {
        can: CAN.to_vec(),
        cannot: CANNOT.to_vec(),
        tools: TOOLS
            .iter()
            .map(|t| ManifestTool {
                name: t.name,
                title: t.title,
                description: t.description,
                group: t.group,
                input_schema: t.input_schema(),
            })
            .collect(),
        live_data: names(ToolGroup::LiveData),
        product_docs: names(ToolGroup::ProductDocs),
        guidance: Guidance {
            rules: RULES.iter().map(|(question, tool)| ToolChoice { question, tool: *tool }).collect(),
            prompt: prompt(),
        },
    }
}

/// The tool-choice guidance alone (the MCP server's `instructions`).
pub fn guidance_prompt() -> String {
    prompt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assistant::registry::ToolName;

    #[test]
    fn every_tool_is_in_exactly_one_group_and_every_rule_names_a_tool() {
        let m = manifest();
        assert_eq!(m.tools.len(), 7);
        assert_eq!(m.live_data.len() + m.product_docs.len(), 7);
        assert_eq!(m.product_docs, ["search_product_docs"]);
        for r in &m.guidance.rules {
            if let Some(t) = r.tool {
                assert!(ToolName::parse(t).is_some(), "{t}");
                assert!(m.guidance.prompt.contains(t));
            }
        }
        assert!(m.cannot.iter().any(|c| c.contains("/settings/integrations/webhooks")));
    }
}
