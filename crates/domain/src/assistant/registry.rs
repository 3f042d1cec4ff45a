//! The one list of the assistant's tools. The execute endpoint, the capabilities manifest and the
//! MCP server are all generated from [`TOOLS`], so they cannot disagree.

use serde::Serialize;
use serde_json::Value;

use super::schema::{input_schema, validate, ArgKind, ArgSpec, ValidArgs};
use crate::channels::{ChannelId, ChannelType};
use crate::common::error::{FieldError, ValidationErrors};
use crate::contacts::E164Phone;
use crate::reports::{GroupBy, RawReportQuery};
use crate::users::Email;

/// Which kind of question a tool answers; an assistant backend routes on it (the manifest's
/// `group` of each tool, `docs/assistant.md`, "One registry, three faces").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolGroup {
    /// Reads the workspace's current data.
    LiveData,
    /// Searches the product documentation.
    ProductDocs,
}

/// The tools, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolName {
    /// Counts across the workspace: channels, webhooks, inbox, AI agents, labels, members.
    GetWorkspaceOverview,
    /// The workspace's channels, of one platform or all.
    ListChannels,
    /// The workspace's webhook destinations.
    ListWebhooks,
    /// WhatsApp delivery and read figures per day, of one channel or all.
    GetChannelAnalytics,
    /// One contact's conversations, messages, cost estimate and support team.
    GetContactAnalytics,
    /// Searches the product documentation (`docs/search.md`).
    SearchProductDocs,
    /// The conversation report of `GET /v1/reports/conversations`.
    GetConversationReport,
}

impl ToolName {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        self.spec().name
    }

    /// The tool's specification.
    pub fn spec(self) -> &'static ToolSpec {
        // TOOLS is in the enum's order; the test below keeps it so.
        &TOOLS[self as usize]
    }

    /// The tool with this wire name.
    pub fn parse(name: &str) -> Option<ToolName> {
        TOOLS.iter().find(|t| t.name == name).map(|t| t.tool)
    }
}

/// One tool: everything a model or a client needs to call it.
#[derive(Debug)]
pub struct ToolSpec {
    /// Which tool.
    pub tool: ToolName,
    /// snake_case wire name.
    pub name: &'static str,
    /// A short human title (MCP `title`).
    pub title: &'static str,
    /// What it does and when to use it, written for a language model.
    pub description: &'static str,
    /// Routing group.
    pub group: ToolGroup,
    /// Its arguments.
    pub args: &'static [ArgSpec],
}

impl ToolSpec {
    /// The JSON Schema of its arguments.
    pub fn input_schema(&self) -> Value {
        input_schema(self.args)
    }
}

/// The ranges of `get_channel_analytics` (`docs/product/assistant-tools.md`).
pub const CHANNEL_RANGES: &[&str] = &["7d", "14d", "30d", "60d", "90d"];
/// Bounds of `get_contact_analytics`'s range in days (`docs/product/assistant-tools.md`).
pub const CONTACT_RANGE_DAYS: std::ops::RangeInclusive<u16> = 7..=90;
/// `search_product_docs`'s limit bounds and default (`docs/search.md`, "The result").
pub const DOCS_LIMIT: (i64, i64, i64) = (1, 8, 5);
/// The largest integer every JSON implementation reads exactly.
const MAX_ID: i64 = 9_007_199_254_740_991;

/// Every tool, in [`ToolName`] order.
pub static TOOLS: [ToolSpec; 7] = [
    ToolSpec {
        tool: ToolName::GetWorkspaceOverview,
        name: "get_workspace_overview",
        title: "Workspace overview",
        description: "Point-in-time snapshot of the current workspace in one call: channels per type (total and \
            connected), webhook destinations (total, active, inactive), inbox threads and unread messages per thread \
            status, AI agents per status, labels and active team members. Use it for questions that need several \
            counts at once. Individual channel names are not included (use list_channels). Takes no arguments.",
        group: ToolGroup::LiveData,
        args: &[],
    },
    ToolSpec {
        tool: ToolName::ListChannels,
        name: "list_channels",
        title: "List channels",
        description: "Lists the workspace's messaging channels (WhatsApp numbers, Messenger pages, Instagram \
            accounts) with id, channel_type, display_name, identifier (the phone number for WhatsApp) and status \
            (`active` means connected). Use it for channel details; the ids are the channel_id of \
            get_channel_analytics. Channels are connected and changed in the settings, not by the assistant.",
        group: ToolGroup::LiveData,
        args: &[ArgSpec {
            name: "channel_type",
            description: "Only channels of this platform; `all` for every channel.",
            kind: ArgKind::Choice { values: &["whatsapp", "messenger", "instagram", "all"], default: Some("all") },
            required: false,
        }],
    },
    ToolSpec {
        tool: ToolName::ListWebhooks,
        name: "list_webhooks",
        title: "List webhook destinations",
        description: "Lists the workspace's outbound webhook destinations with url, platform, subscribed events and \
            active flag (never their signing secrets). Read-only: the assistant cannot create, edit, activate or \
            delete webhooks; point the user to the integrations settings at /settings/integrations/webhooks.",
        group: ToolGroup::LiveData,
        args: &[ArgSpec {
            name: "active_only",
            description: "true to list only active destinations.",
            kind: ArgKind::Flag { default: false },
            required: false,
        }],
    },
    ToolSpec {
        tool: ToolName::GetChannelAnalytics,
        name: "get_channel_analytics",
        title: "WhatsApp channel analytics",
        description: "WhatsApp delivery statistics of outbound messages: sent, delivered, read and failed totals, \
            delivery rate (delivered / sent) and read rate (read / delivered) as fractions, and a zero-filled daily \
            series suited to line or combo charts. Days are calendar days in the workspace's time zone, ending \
            today. Give channel_id for one WhatsApp channel or omit it for all WhatsApp channels together. For a \
            Messenger or Instagram channel it returns a note pointing to the page about those platforms' \
            insights (/docs/analytics-messenger-instagram) and to /analytics, and analytics null. It has no CSV or top-countries export; those are on /analytics.",
        group: ToolGroup::LiveData,
        args: &[
            ArgSpec {
                name: "channel_id",
                description: "Id of one channel (from list_channels); omit for all WhatsApp channels.",
                kind: ArgKind::Integer { min: 1, max: MAX_ID, default: None },
                required: false,
            },
            ArgSpec {
                name: "range",
                description: "How many days, ending today.",
                kind: ArgKind::Choice { values: CHANNEL_RANGES, default: Some("7d") },
                required: false,
            },
        ],
    },
    ToolSpec {
        tool: ToolName::GetContactAnalytics,
        name: "get_contact_analytics",
        title: "Customer insights",
        description: "Insights on one customer, looked up by phone_number or email: give at least one. A name alone \
            is never used to find anyone: without a phone number or e-mail, ask the user for one instead of \
            guessing. Returns the contact's profile, a thread summary, inbound/outbound activity (human, AI, \
            template) with delivered/read/failed and a daily series, an estimated WhatsApp cost in USD with a \
            disclaimer, labels, the support team and per-conversation metadata (channel, status, unread, assignee, \
            labels, handover status). Aggregates and metadata only, never message content.",
        group: ToolGroup::LiveData,
        args: &[
            ArgSpec {
                name: "phone_number",
                description: "The customer's phone number in international form, such as +14155550123 (spaces, \
                    dashes and a 00 prefix are fine).",
                kind: ArgKind::Text { max_chars: 32, default: None },
                required: false,
            },
            ArgSpec {
                name: "email",
                description: "The customer's e-mail address.",
                kind: ArgKind::Text { max_chars: 254, default: None },
                required: false,
            },
            ArgSpec {
                name: "name",
                description: "The customer's name as the user gave it: context only, never used for the lookup.",
                kind: ArgKind::Text { max_chars: 200, default: None },
                required: false,
            },
            ArgSpec {
                name: "range",
                description: "How many days of activity, ending today: from 7d to 90d, such as 30d.",
                kind: ArgKind::Text { max_chars: 4, default: Some("30d") },
                required: false,
            },
            ArgSpec {
                name: "label",
                description: "A label name: restricts the statistics and threads to conversations carrying it.",
                kind: ArgKind::Text { max_chars: 50, default: None },
                required: false,
            },
        ],
    },
    ToolSpec {
        tool: ToolName::SearchProductDocs,
        name: "search_product_docs",
        title: "Search the product documentation",
        description: "Searches the wms product documentation for how-to, what-is and setup questions and returns \
            the best pages with slug, title, category, a snippet, a score and a url (/docs/<slug>#<section>) that \
            opens the matching section in the app. Answer from the snippets and give the url as the link to read \
            more; when there are no hits, say so and suggest the closest settings page or a rephrased question.",
        group: ToolGroup::ProductDocs,
        args: &[
            ArgSpec {
                name: "query",
                description: "What to search for, in the user's words.",
                kind: ArgKind::Text { max_chars: 500, default: None },
                required: true,
            },
            ArgSpec {
                name: "limit",
                description: "How many pages at most.",
                kind: ArgKind::Integer { min: DOCS_LIMIT.0, max: DOCS_LIMIT.1, default: Some(DOCS_LIMIT.2) },
                required: false,
            },
        ],
    },
    ToolSpec {
        tool: ToolName::GetConversationReport,
        name: "get_conversation_report",
        title: "Conversation report",
        description: "How fast the team answers, for a period of up to 366 days: conversations started (a \
            resolved thread that gets a new message counts again), incoming and outgoing messages, resolutions, \
            first response time by members and, apart, by AI agents, reply time and resolution time (each as \
            count, avg, median and p90 in seconds, null when count is 0), and SLAs hit and missed: the same \
            figures as GET /v1/reports/conversations. \
            group_by splits them per member (agent), team, label or channel; business_hours true counts only \
            time inside the workspace's business hours. Only workspace admins (and API keys with reports:read) \
            may read it: when it is refused, say so rather than estimating figures.",
        group: ToolGroup::LiveData,
        args: &[
            ArgSpec {
                name: "since",
                description: "Start of the period, inclusive: an RFC 3339 instant (2026-11-01T00:00:00Z) or a \
                    date YYYY-MM-DD (midnight UTC). Default: 30 days before until.",
                kind: ArgKind::Text { max_chars: REPORT_INSTANT_CHARS, default: None },
                required: false,
            },
            ArgSpec {
                name: "until",
                description: "End of the period, exclusive, after since: an RFC 3339 instant or a date YYYY-MM-DD \
                    (midnight UTC). Default: now.",
                kind: ArgKind::Text { max_chars: REPORT_INSTANT_CHARS, default: None },
                required: false,
            },
            ArgSpec {
                name: "group_by",
                description: "none for one group, the whole workspace; agent for one group per member who \
                    answered, team per thread team, label per label the threads carry now, channel per channel.",
                kind: ArgKind::Choice { values: &GroupBy::NAMES, default: Some("none") },
                required: false,
            },
            ArgSpec {
                name: "business_hours",
                description: "true to count only time inside the workspace's business hours.",
                kind: ArgKind::Flag { default: false },
                required: false,
            },
        ],
    },
];

/// The longest `since` or `until` of `get_conversation_report` (an RFC 3339 instant with
/// nanoseconds and an offset has 35 characters).
const REPORT_INSTANT_CHARS: usize = 40;

/// A validated tool call, ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCall {
    /// `get_workspace_overview`
    WorkspaceOverview,
    /// `list_channels`; `None` means all types.
    ListChannels {
        /// The platform filter.
        channel_type: Option<ChannelType>,
    },
    /// `list_webhooks`
    ListWebhooks {
        /// Only active destinations.
        active_only: bool,
    },
    /// `get_channel_analytics`
    ChannelAnalytics {
        /// One channel, or every WhatsApp channel.
        channel_id: Option<ChannelId>,
        /// The range argument (`7d`).
        range: String,
        /// Its number of days.
        days: u16,
    },
    /// `get_contact_analytics`
    ContactAnalytics(ContactQuery),
    /// `search_product_docs`
    SearchProductDocs {
        /// The query.
        query: String,
        /// At most this many hits.
        limit: u8,
    },
    /// `get_conversation_report`: the query as the REST endpoint receives it, validated by the
    /// reports service exactly as there (its period needs the clock).
    ConversationReport(RawReportQuery),
}

/// The validated arguments of `get_contact_analytics`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContactQuery {
    /// Normalised phone number.
    pub phone: Option<E164Phone>,
    /// Normalised e-mail.
    pub email: Option<Email>,
    /// The range argument (`30d`).
    pub range: String,
    /// Its number of days.
    pub days: u16,
    /// Label filter.
    pub label: Option<String>,
}

impl ToolCall {
    /// Validates a call of the tool named `tool` with `arguments`.
    ///
    /// # Errors
    /// Every problem, each named: `tool` for an unknown tool, the argument's name otherwise.
    pub fn parse(tool: &str, arguments: &Value) -> Result<ToolCall, ValidationErrors> {
        let name = ToolName::parse(tool).ok_or_else(|| {
            let known: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
            ValidationErrors::one("tool", format!("unknown tool `{tool}`; the tools are {}", known.join(", ")))
        })?;
        let args = validate(name.spec().args, arguments)?;
        Self::from_args(name, &args)
    }

    fn from_args(name: ToolName, a: &ValidArgs) -> Result<ToolCall, ValidationErrors> {
        Ok(match name {
            ToolName::GetWorkspaceOverview => ToolCall::WorkspaceOverview,
            ToolName::ListChannels => ToolCall::ListChannels {
                channel_type: match a.text("channel_type") {
                    None | Some("all") => None,
                    Some(t) => Some(t.parse::<ChannelType>().map_err(|e| ValidationErrors(vec![e]))?),
                },
            },
            ToolName::ListWebhooks => ToolCall::ListWebhooks { active_only: a.flag("active_only") },
            ToolName::GetChannelAnalytics => {
                let range = a.text("range").unwrap_or("7d").to_owned();
                let days = days_of(&range).ok_or_else(|| ValidationErrors::one("range", "must be like 7d"))?;
                ToolCall::ChannelAnalytics { channel_id: a.integer("channel_id").map(ChannelId), range, days }
            }
            ToolName::GetContactAnalytics => ToolCall::ContactAnalytics(contact_query(a)?),
            ToolName::SearchProductDocs => {
                let query = a.text("query").unwrap_or_default().trim().to_owned();
                if query.is_empty() {
                    return Err(ValidationErrors::one("query", "must not be empty"));
                }
                let limit = a.integer("limit").unwrap_or(DOCS_LIMIT.2);
                ToolCall::SearchProductDocs { query, limit: u8::try_from(limit).unwrap_or(5) }
            }
            ToolName::GetConversationReport => ToolCall::ConversationReport(RawReportQuery {
                since: a.text("since").map(str::to_owned),
                until: a.text("until").map(str::to_owned),
                group_by: a.text("group_by").map(str::to_owned),
                business_hours: Some(a.flag("business_hours").to_string()),
            }),
        })
    }
}

/// `30d` → 30.
fn days_of(range: &str) -> Option<u16> {
    let n = range.strip_suffix('d')?;
    if n.is_empty() || n.len() > 3 || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

fn contact_query(a: &ValidArgs) -> Result<ContactQuery, ValidationErrors> {
    let mut errors = ValidationErrors::default();
    let blank = |s: &&str| !s.trim().is_empty();
    let phone = a.text("phone_number").filter(blank).and_then(|p| errors.check(E164Phone::new("phone_number", p)));
    let email = a.text("email").filter(blank).and_then(|e| errors.check(Email::new("email", e)));
    let range = a.text("range").unwrap_or("30d").trim().to_ascii_lowercase();
    let days = errors.check(days_of(&range).filter(|d| CONTACT_RANGE_DAYS.contains(d)).ok_or_else(|| {
        FieldError::new("range", format!("must be a number of days from 7d to 90d, such as 30d, not `{range}`"))
    }));
    let label = a.text("label").map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned);
    errors.into_result()?;
    Ok(ContactQuery { phone, email, range, days: days.unwrap_or(30), label })
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
