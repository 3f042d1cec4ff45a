//! What `get_contact_analytics` returns (`docs/assistant.md`, "`get_contact_analytics`").

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use time::{Date, OffsetDateTime};

use super::{wire, Period};
use crate::channels::{ChannelId, ChannelType};

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

/// Someone or something a thread is assigned to: a user, a team or an AI agent.
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
