//! What the live-data tools return (spec 2.4–2.8). Field names are the contract: the assistant,
//! the execute endpoint and MCP clients read them as serialised here.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use time::{Date, OffsetDateTime};

use crate::channels::{ChannelId, ChannelType};

/// RFC 3339 timestamps and ISO 8601 dates on the wire.
pub(crate) mod wire {
    use serde::Serializer;
    use time::format_description::well_known::Rfc3339;
    use time::{Date, OffsetDateTime};

    /// `2026-11-20T09:30:00Z`
    pub fn timestamp<S: Serializer>(t: &OffsetDateTime, s: S) -> Result<S::Ok, S::Error> {
        let utc = t.to_offset(time::UtcOffset::UTC);
        s.serialize_str(&utc.format(&Rfc3339).map_err(serde::ser::Error::custom)?)
    }

    /// An optional timestamp; null when absent.
    pub fn opt_timestamp<S: Serializer>(t: &Option<OffsetDateTime>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => timestamp(t, s),
            None => s.serialize_none(),
        }
    }

    /// `2026-11-20`
    pub fn date<S: Serializer>(d: &Date, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day()))
    }
}

// ---------------------------------------------------------------------------------------------
// get_workspace_overview (spec 2.6)

/// A point-in-time snapshot of a workspace.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WorkspaceOverview {
    /// The workspace itself.
    pub workspace: OverviewWorkspace,
    /// Channel counts.
    pub channels: ChannelCounts,
    /// Webhook destination counts.
    pub webhooks: WebhookCounts,
    /// Thread and unread message counts.
    pub inbox: InboxCounts,
    /// AI agent counts.
    pub ai_agents: AgentCounts,
    /// Label count.
    pub labels: LabelCounts,
    /// Team member count.
    pub team_members: TeamCounts,
    /// When the snapshot was taken.
    #[serde(serialize_with = "wire::timestamp")]
    #[schemars(with = "String")]
    pub generated_at: OffsetDateTime,
}

/// `workspace`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct OverviewWorkspace {
    /// Id.
    pub id: i64,
    /// Display name.
    pub name: String,
    /// Handle.
    pub slug: String,
    /// Whether it is active.
    pub is_active: bool,
}

/// `channels`
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ChannelCounts {
    /// Every channel.
    pub total: i64,
    /// Per channel type that has channels.
    pub by_type: BTreeMap<String, TypeCounts>,
}

/// `channels.by_type.<type>`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TypeCounts {
    /// Channels of the type.
    pub total: i64,
    /// Those with status `active`.
    pub connected: i64,
}

/// `webhooks`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WebhookCounts {
    /// Every destination.
    pub total: i64,
    /// Active ones.
    pub active: i64,
    /// Inactive ones.
    pub inactive: i64,
}

/// `inbox`
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct InboxCounts {
    /// Every thread.
    pub threads_total: i64,
    /// Unread inbound messages over every thread.
    pub unread_messages_total: i64,
    /// Per thread status that has threads.
    pub by_status: BTreeMap<String, StatusCounts>,
}

/// `inbox.by_status.<status>`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StatusCounts {
    /// Threads with the status.
    pub total: i64,
    /// Unread inbound messages in them.
    pub unread_messages: i64,
}

/// `ai_agents`
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AgentCounts {
    /// Every agent.
    pub total: i64,
    /// Per status that has agents (`active`, `draft`).
    pub by_status: BTreeMap<String, i64>,
}

/// `labels`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LabelCounts {
    /// Every label.
    pub total: i64,
}

/// `team_members`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TeamCounts {
    /// Active members.
    pub active: i64,
}

// ---------------------------------------------------------------------------------------------
// list_channels (spec 2.4) and list_webhooks (spec 2.5)

/// A channel as the assistant sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ChannelSummary {
    /// Used as `channel_id` in `get_channel_analytics`.
    pub id: ChannelId,
    /// `whatsapp`, `messenger` or `instagram`.
    pub channel_type: ChannelType,
    /// Name shown to the team.
    pub display_name: String,
    /// Phone number for WhatsApp, the platform id otherwise.
    pub identifier: String,
    /// `active` means connected.
    pub status: String,
}

/// The result of `list_channels`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ChannelList {
    /// The `channel_type` filter applied (`all` when none).
    pub filter: String,
    /// Matching channels, oldest first.
    pub channels: Vec<ChannelSummary>,
}

/// A webhook destination as the assistant sees it; never its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WebhookSummary {
    /// Id.
    pub id: i64,
    /// Where events are delivered.
    pub url: String,
    /// Free label such as `zapier` or `custom`.
    pub platform: String,
    /// Subscribed event types.
    pub events: Vec<String>,
    /// Whether it receives deliveries.
    pub active: bool,
    /// Creation time.
    #[serde(serialize_with = "wire::timestamp")]
    #[schemars(with = "String")]
    pub created_at: OffsetDateTime,
    /// Last change.
    #[serde(serialize_with = "wire::timestamp")]
    #[schemars(with = "String")]
    pub updated_at: OffsetDateTime,
}

/// The result of `list_webhooks`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WebhookList {
    /// Whether only active destinations were asked for.
    pub active_only: bool,
    /// Number of destinations returned.
    pub total: usize,
    /// Destinations, oldest first.
    pub webhooks: Vec<WebhookSummary>,
}

// ---------------------------------------------------------------------------------------------
// Figures shared by the analytics tools

/// Outbound message figures by the status the messages reached (docs/assistant.md, "Rates").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DeliveryCounts {
    /// Status `sent`, `delivered` or `read`.
    pub sent: i64,
    /// Status `delivered` or `read`.
    pub delivered: i64,
    /// Status `read`.
    pub read: i64,
    /// Status `failed`.
    pub failed: i64,
}

impl DeliveryCounts {
    /// delivered ÷ sent, as a fraction rounded to 4 places; null when nothing was sent.
    pub fn delivery_rate(&self) -> Option<f64> {
        ratio(self.delivered, self.sent)
    }

    /// read ÷ delivered, as a fraction rounded to 4 places; null when nothing was delivered.
    pub fn read_rate(&self) -> Option<f64> {
        ratio(self.read, self.delivered)
    }

    /// Adds another day's or channel's figures.
    pub fn add(&mut self, o: &DeliveryCounts) {
        self.sent += o.sent;
        self.delivered += o.delivered;
        self.read += o.read;
        self.failed += o.failed;
    }
}

fn ratio(num: i64, den: i64) -> Option<f64> {
    (den > 0).then(|| ((num as f64 / den as f64) * 10_000.0).round() / 10_000.0)
}

/// The days a result covers: `days` calendar days ending today, in `time_zone`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Period {
    /// The range argument (`7d`).
    pub range: String,
    /// First day, inclusive.
    #[serde(serialize_with = "wire::date")]
    #[schemars(with = "String")]
    pub from: Date,
    /// Last day (today), inclusive.
    #[serde(serialize_with = "wire::date")]
    #[schemars(with = "String")]
    pub to: Date,
    /// The IANA time zone whose calendar days these are (the workspace's, `UTC` by default).
    pub time_zone: String,
}

// ---------------------------------------------------------------------------------------------
// get_channel_analytics (spec 2.7)

/// One day of a channel analytics series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct DailyDelivery {
    /// The day.
    #[serde(serialize_with = "wire::date")]
    #[schemars(with = "String")]
    pub date: Date,
    /// That day's figures.
    #[serde(flatten)]
    pub counts: DeliveryCounts,
    /// delivered ÷ sent that day; null when nothing was sent.
    pub delivery_rate: Option<f64>,
    /// read ÷ delivered that day; null when nothing was delivered.
    pub read_rate: Option<f64>,
}

/// WhatsApp figures over a period.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WhatsappAnalytics {
    /// Totals over the period.
    pub totals: DeliveryCounts,
    /// delivered ÷ sent over the period.
    pub delivery_rate: Option<f64>,
    /// read ÷ delivered over the period.
    pub read_rate: Option<f64>,
    /// One point per day of the period, oldest first, zero-filled.
    pub daily: Vec<DailyDelivery>,
    /// How the figures are counted, for the assistant to quote.
    pub definitions: BTreeMap<&'static str, &'static str>,
}

/// The result of `get_channel_analytics`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ChannelAnalytics {
    /// WhatsApp: database-backed statistics.
    Whatsapp {
        /// The channel asked about; null when all WhatsApp channels were.
        channel: Option<ChannelSummary>,
        /// The WhatsApp channels the figures cover.
        channels: Vec<ChannelSummary>,
        /// The days covered.
        period: Period,
        /// The figures.
        analytics: WhatsappAnalytics,
        /// Set when the workspace has no WhatsApp channel.
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// Messenger or Instagram: no statistics here (spec 2.7).
    OtherPlatform {
        /// The channel asked about.
        channel: ChannelSummary,
        /// Points the user to the Analytics page.
        note: String,
        /// Always null.
        analytics: Option<()>,
    },
}

// ---------------------------------------------------------------------------------------------
// get_contact_analytics (spec 2.8)

/// `contact`: the customer's profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ContactProfile {
    /// Id.
    pub id: i64,
    /// Name, when known.
    pub name: Option<String>,
    /// E.164 phone, when known.
    pub phone: Option<String>,
    /// E-mail, when known.
    pub email: Option<String>,
    /// ISO 3166-1 alpha-2 country.
    pub country: Option<String>,
    /// Preferred language.
    pub language: Option<String>,
    /// The team's note about the contact.
    pub note: Option<String>,
    /// First conversation.
    #[serde(serialize_with = "wire::opt_timestamp")]
    #[schemars(with = "Option<String>")]
    pub first_contacted_at: Option<OffsetDateTime>,
    /// Latest activity.
    #[serde(serialize_with = "wire::opt_timestamp")]
    #[schemars(with = "Option<String>")]
    pub last_contacted_at: Option<OffsetDateTime>,
}

/// A channel in a contact report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ChannelRef {
    /// Id.
    pub id: ChannelId,
    /// Platform.
    pub channel_type: ChannelType,
    /// Name shown to the team.
    pub display_name: String,
}

/// `summary`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ContactSummary {
    /// The contact's threads (with the label, when one was given).
    pub threads_total: i64,
    /// Threads with status `open`.
    pub open: i64,
    /// Threads with status `resolved`.
    pub resolved: i64,
    /// Threads per status, including any other statuses.
    pub by_status: BTreeMap<String, i64>,
    /// Unread inbound messages over those threads.
    pub unread_messages: i64,
    /// Channels the threads are on.
    pub channels_used: Vec<ChannelRef>,
}

/// One day of a contact's message activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ContactDay {
    /// The day.
    #[serde(serialize_with = "wire::date")]
    #[schemars(with = "String")]
    pub date: Date,
    /// Messages from the contact.
    pub inbound: i64,
    /// Messages to the contact.
    pub outbound: i64,
    /// Outbound written by team members.
    pub outbound_human: i64,
    /// Outbound written by AI agents.
    pub outbound_ai: i64,
    /// Outbound template messages.
    pub template_sends: i64,
    /// Outbound with status `delivered` or `read`.
    pub delivered: i64,
    /// Outbound with status `read`.
    pub read: i64,
    /// Outbound with status `failed`.
    pub failed: i64,
    /// Templates on WhatsApp channels that were sent (status `sent`, `delivered` or `read`):
    /// what the cost estimate charges.
    #[serde(skip)]
    pub billable_templates: i64,
}

impl ContactDay {
    /// A day without messages.
    pub fn empty(date: Date) -> Self {
        Self {
            date,
            inbound: 0,
            outbound: 0,
            outbound_human: 0,
            outbound_ai: 0,
            template_sends: 0,
            delivered: 0,
            read: 0,
            failed: 0,
            billable_templates: 0,
        }
    }
}

/// `time_based`: message activity over the period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ContactActivity {
    /// Messages from the contact.
    pub inbound: i64,
    /// Messages to the contact.
    pub outbound: i64,
    /// Outbound written by team members.
    pub outbound_human: i64,
    /// Outbound written by AI agents.
    pub outbound_ai: i64,
    /// Outbound template messages.
    pub template_sends: i64,
    /// Outbound with status `delivered` or `read`.
    pub delivered: i64,
    /// Outbound with status `read`.
    pub read: i64,
    /// Outbound with status `failed`.
    pub failed: i64,
    /// One point per day of the period, oldest first, zero-filled.
    pub daily: Vec<ContactDay>,
}

/// `cost_based`: what messaging this contact is estimated to have cost.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ContactCost {
    /// template_count × rate_per_template_usd, rounded to the cent's hundredth.
    pub estimated_outbound_cost_usd: f64,
    /// Template messages sent to the contact on WhatsApp channels in the period (the billable ones).
    pub template_count: i64,
    /// The rate applied per template message.
    pub rate_per_template_usd: f64,
    /// The country whose rate applies (`other` when the contact's country has no entry).
    pub pricing_country: String,
    /// Says that this is an estimate and what it leaves out.
    pub disclaimer: &'static str,
}

/// Someone or something a thread is assigned to (spec 2.8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Assignee {
    /// `user`, `team` or `ai_agent`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The member's user id, the team's or the agent's id.
    pub id: i64,
    /// Their name.
    pub name: Option<String>,
}

/// A team member who wrote to the contact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Responder {
    /// The member's user id.
    pub user_id: i64,
    /// Their name.
    pub name: String,
    /// Messages they sent the contact in the period.
    pub outbound_messages: i64,
}

/// An assignee with the number of the contact's threads they hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Assignment {
    /// Who.
    #[serde(flatten)]
    pub assignee: Assignee,
    /// How many of the contact's threads.
    pub threads: i64,
}

/// `support_team`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SupportTeam {
    /// Team members who wrote to the contact in the period, most messages first.
    pub responders: Vec<Responder>,
    /// Current assignees of the contact's threads, most threads first.
    pub primary_assignments: Vec<Assignment>,
}

/// One conversation, metadata only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Conversation {
    /// Thread id.
    pub thread_id: i64,
    /// Its channel.
    pub channel: ChannelRef,
    /// Thread status.
    pub status: String,
    /// Unread inbound messages.
    pub unread_messages: i64,
    /// Current assignee; null when unassigned.
    pub assignee: Option<Assignee>,
    /// Label names.
    pub labels: Vec<String>,
    /// `ai`, `requested` or `human` when an AI agent is involved; null otherwise.
    pub handover_status: Option<String>,
    /// When it started.
    #[serde(serialize_with = "wire::timestamp")]
    #[schemars(with = "String")]
    pub created_at: OffsetDateTime,
    /// Latest message.
    #[serde(serialize_with = "wire::opt_timestamp")]
    #[schemars(with = "Option<String>")]
    pub last_message_at: Option<OffsetDateTime>,
}

/// How the contact was looked up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Lookup {
    /// `phone_number` or `email`; null when neither was given.
    pub by: Option<&'static str>,
    /// The normalised value looked up.
    pub value: Option<String>,
}

/// The full report on one contact.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ContactReport {
    /// How the contact was found.
    pub lookup: Lookup,
    /// The days `time_based`, `cost_based` and `support_team.responders` cover.
    pub period: Period,
    /// The label filter applied, if any.
    pub label: Option<String>,
    /// The profile.
    pub contact: ContactProfile,
    /// Thread totals.
    pub summary: ContactSummary,
    /// Message activity over the period.
    pub time_based: ContactActivity,
    /// Estimated cost over the period.
    pub cost_based: ContactCost,
    /// Label names on the contact's threads.
    pub labels: Vec<String>,
    /// Who handles the contact.
    pub support_team: SupportTeam,
    /// Threads, latest activity first (at most [`super::MAX_CONVERSATIONS`]).
    pub conversations: Vec<Conversation>,
    /// Anything the assistant should mention (an unknown label, truncated conversations).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The result of `get_contact_analytics`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ContactAnalytics {
    /// A contact was found.
    Found(Box<ContactReport>),
    /// No contact, for one of the reasons in `note` (nothing to look up, none or several matches).
    NoContact {
        /// What was looked up.
        lookup: Lookup,
        /// Always null: the tool never guesses.
        contact: Option<()>,
        /// What the assistant should do next.
        note: String,
    },
}
