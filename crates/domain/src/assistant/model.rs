//! What the live-data tools return (`docs/assistant.md`, "Results"). Field names are the contract: the assistant,
//! the execute endpoint and MCP clients read them as serialised here.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use time::{Date, OffsetDateTime};

use crate::channels::{ChannelId, ChannelType};

mod contact;

pub use contact::*;

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
// get_workspace_overview

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
    /// Per channel type: every type (`whatsapp`, `messenger`, `instagram`), zeros included.
    pub by_type: BTreeMap<String, TypeCounts>,
}

impl ChannelCounts {
    /// Lists every channel type, those without channels at zero: a reader asking how many
    /// Instagram channels there are reads 0, not a missing key.
    pub fn with_every_type(mut self) -> Self {
        for t in crate::channels::ChannelType::ALL {
            self.by_type.entry(t.as_str().to_owned()).or_default();
        }
        self
    }
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
    /// Per thread status: every status of the known set (`open`, `pending`, `snoozed`,
    /// `resolved`), zeros included.
    pub by_status: BTreeMap<String, StatusCounts>,
}

impl InboxCounts {
    /// Lists every thread status, those without threads at zero: statuses are a known set, so a
    /// reader (or model) sees "0 snoozed" rather than guessing the status does not exist.
    pub fn with_every_status(mut self) -> Self {
        for s in crate::threads::ThreadStatus::ALL {
            self.by_status.entry(s.as_str().to_owned()).or_default();
        }
        self
    }
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
    /// Per status: every status (`active`, `draft`), zeros included.
    pub by_status: BTreeMap<String, i64>,
}

impl AgentCounts {
    /// Lists every agent status, those without agents at zero.
    pub fn with_every_status(mut self) -> Self {
        for s in crate::ai_agents::STATUSES {
            self.by_status.entry(s.to_owned()).or_default();
        }
        self
    }
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
// list_channels and list_webhooks

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
// get_channel_analytics

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
    /// Messenger or Instagram: no statistics here, a note pointing at Meta's insights instead.
    OtherPlatform {
        /// The channel asked about.
        channel: ChannelSummary,
        /// Points the user to the Analytics page.
        note: String,
        /// Always null.
        analytics: Option<()>,
    },
}
