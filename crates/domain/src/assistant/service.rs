//! Running a tool: validate the call, read through the ports, shape the result.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::Value;
use time::{Date, Duration};

use super::model::{
    Assignment, ChannelAnalytics, ChannelList, ChannelRef, ContactActivity, ContactAnalytics, ContactCost, ContactDay,
    ContactReport, ContactSummary, DailyDelivery, DeliveryCounts, Lookup, Period, SupportTeam, WhatsappAnalytics,
};
use super::ports::{ChannelStats, ChannelStatsError, ContactFacts, ContactKey, LiveData, WhatsappDays};
use super::pricing;
use super::registry::{ContactQuery, ToolCall};
use crate::access::{authorize, Action, Caller, Denied};
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::ports::Clock;
use crate::docs::{DocsLibrary, DocsSearch, SearchError};
use crate::workspace::WorkspaceId;

/// The overview is compacted above this many bytes of JSON when compression is on (spec 8).
pub const OVERVIEW_COMPRESS_BYTES: usize = 2048;
/// A contact report lists at most this many conversations, latest activity first.
pub const MAX_CONVERSATIONS: usize = 50;

/// Why a tool call produced no result.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// Unknown tool, unknown or invalid argument, or an id the workspace does not have: the caller
    /// (or the model) can correct it. Each problem is named.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// The tool cannot run in this installation (documentation search not configured).
    #[error("{0}")]
    Unavailable(String),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Installation settings of the tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AssistantSettings {
    /// Compact the overview when its JSON is larger than [`OVERVIEW_COMPRESS_BYTES`].
    pub compress_overview: bool,
}

/// The assistant's tools, bound to their data.
#[derive(Clone)]
pub struct Assistant {
    data: Arc<dyn LiveData>,
    docs: Option<Arc<dyn DocsSearch>>,
    library: Arc<DocsLibrary>,
    clock: Arc<dyn Clock>,
    settings: AssistantSettings,
}

impl std::fmt::Debug for Assistant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assistant").field("settings", &self.settings).field("docs", &self.docs.is_some()).finish()
    }
}

impl Assistant {
    /// The five live-data tools on `data`; `search_product_docs` answers "not configured" until
    /// [`Assistant::with_docs`] registers a search.
    pub fn new(data: Arc<dyn LiveData>, clock: Arc<dyn Clock>, settings: AssistantSettings) -> Self {
        Self { data, docs: None, library: Arc::default(), clock, settings }
    }

    /// Registers the documentation search behind `search_product_docs`.
    #[must_use]
    pub fn with_docs(mut self, docs: Arc<dyn DocsSearch>) -> Self {
        self.docs = Some(docs);
        self
    }

    /// Registers the pages the search indexes, to be read (`/docs`, MCP resources).
    #[must_use]
    pub fn with_library(mut self, library: Arc<DocsLibrary>) -> Self {
        self.library = library;
        self
    }

    /// The documentation search of `search_product_docs`, when configured.
    pub fn docs_search(&self) -> Option<&Arc<dyn DocsSearch>> {
        self.docs.as_ref()
    }

    /// The documentation pages (empty until [`Assistant::with_library`]).
    pub fn library(&self) -> &DocsLibrary {
        &self.library
    }

    /// Whether compressed overviews may omit zero counts (the overview's output schema says so).
    pub fn settings(&self) -> AssistantSettings {
        self.settings
    }

    /// Validates and runs the tool named `tool` for workspace `ws`; the result as JSON.
    ///
    /// # Errors
    /// [`ToolError::Invalid`] naming the tool or argument; [`ToolError::Unavailable`];
    /// [`ToolError::Unknown`] on infrastructure failures.
    pub async fn execute(&self, ws: WorkspaceId, tool: &str, arguments: &Value) -> Result<Value, ToolError> {
        let call = ToolCall::parse(tool, arguments)?;
        self.run(ws, call).await
    }

    /// [`Assistant::execute`] for `caller`: what the caller may not see is left out. Webhook
    /// destination URLs can hold credentials (user-info, query tokens), so only callers the policy
    /// lets read webhooks see them whole; others get them without user-info, query and fragment.
    ///
    /// # Errors
    /// As [`Assistant::execute`].
    pub async fn execute_as(&self, caller: &Caller, tool: &str, arguments: &Value) -> Result<Value, ToolError> {
        let call = ToolCall::parse(tool, arguments)?;
        if let ToolCall::ListWebhooks { active_only } = call {
            let mut list = self.data.webhooks(caller.workspace_id, active_only).await?;
            // The plan does not matter here: below it there are no destinations to show.
            let whole = matches!(authorize(caller, Action::WebhooksRead), Ok(()) | Err(Denied::PlanRequired { .. }));
            if !whole {
                for w in &mut list.webhooks {
                    w.url = redacted_url(&w.url);
                }
            }
            return to_json(&list);
        }
        self.run(caller.workspace_id, call).await
    }

    /// Runs a validated call.
    ///
    /// # Errors
    /// As [`Assistant::execute`].
    pub async fn run(&self, ws: WorkspaceId, call: ToolCall) -> Result<Value, ToolError> {
        let now = self.clock.now();
        match call {
            ToolCall::WorkspaceOverview => {
                let overview = self.data.overview(ws, now).await?.ok_or_else(|| {
                    ToolError::Unknown(RepoError::new(anyhow::anyhow!("workspace {ws} vanished during the request")))
                })?;
                let value = to_json(&overview)?;
                Ok(if self.settings.compress_overview { compress_overview(value) } else { value })
            }
            ToolCall::ListChannels { channel_type } => {
                let channels = self.data.channels(ws, channel_type).await?;
                let filter = channel_type.map_or("all", |t| t.as_str()).to_owned();
                to_json(&ChannelList { filter, channels })
            }
            ToolCall::ListWebhooks { active_only } => to_json(&self.data.webhooks(ws, active_only).await?),
            ToolCall::ChannelAnalytics { channel_id, range, days } => {
                let stats = self.data.channel_stats(ws, channel_id, days, now).await.map_err(|e| match e {
                    ChannelStatsError::UnknownChannel(id) => ToolError::Invalid(ValidationErrors::one(
                        "channel_id",
                        format!("this workspace has no channel with id {id}; list_channels shows the ids"),
                    )),
                    ChannelStatsError::Unknown(e) => ToolError::Unknown(e),
                })?;
                to_json(&channel_analytics(stats, range, days))
            }
            ToolCall::ContactAnalytics(q) => to_json(&self.contact_analytics(ws, q, now).await?),
            ToolCall::SearchProductDocs { query, limit } => {
                let docs = self.docs.as_ref().ok_or_else(|| {
                    ToolError::Unavailable("documentation search is not configured on this installation".into())
                })?;
                let result = docs.search(&query, limit).await.map_err(|e| match e {
                    SearchError::InvalidLimit(_) => ToolError::Invalid(ValidationErrors::one("limit", e.to_string())),
                    SearchError::Unknown(e) => ToolError::Unknown(e),
                })?;
                to_json(&result)
            }
        }
    }

    async fn contact_analytics(
        &self,
        ws: WorkspaceId,
        q: ContactQuery,
        now: time::OffsetDateTime,
    ) -> Result<ContactAnalytics, ToolError> {
        // Spec 4.3: a name alone never identifies a contact.
        let keys: Vec<(&'static str, ContactKey)> = [
            q.phone.as_ref().map(|p| ("phone_number", ContactKey::Phone(p.as_str().to_owned()))),
            q.email.as_ref().map(|e| ("email", ContactKey::Email(e.as_str().to_owned()))),
        ]
        .into_iter()
        .flatten()
        .collect();
        if keys.is_empty() {
            return Ok(ContactAnalytics::NoContact {
                lookup: Lookup { by: None, value: None },
                contact: None,
                note: "No phone number or e-mail address was given. Ask the user for the customer's e-mail \
                       address or phone number; a name alone is not enough to identify a contact, so do not guess."
                    .into(),
            });
        }
        // The phone number is unique in a workspace, so it is tried first; the e-mail is the fallback.
        for (by, key) in &keys {
            let value = match key {
                ContactKey::Phone(v) | ContactKey::Email(v) => v.clone(),
            };
            let found = self.data.find_contacts(ws, key, 2).await?;
            match found.as_slice() {
                [] => continue,
                [contact] => {
                    let facts = self.data.contact_facts(ws, contact.id, q.label.clone(), q.days, now).await?;
                    let lookup = Lookup { by: Some(by), value: Some(value) };
                    return Ok(ContactAnalytics::Found(Box::new(contact_report(lookup, contact.clone(), &q, facts))));
                }
                _ => {
                    return Ok(ContactAnalytics::NoContact {
                        lookup: Lookup { by: Some(by), value: Some(value) },
                        contact: None,
                        note: "Several contacts share this e-mail address, so it does not identify one customer. \
                               Ask the user for the customer's phone number."
                            .into(),
                    })
                }
            }
        }
        let (by, key) = &keys[0];
        let value = match key {
            ContactKey::Phone(v) | ContactKey::Email(v) => v.clone(),
        };
        Ok(ContactAnalytics::NoContact {
            lookup: Lookup { by: Some(by), value: Some(value) },
            contact: None,
            note: "No contact in this workspace has this phone number or e-mail address. Check it with the user \
                   (phone numbers need the country code) rather than guessing another contact."
                .into(),
        })
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<Value, ToolError> {
    serde_json::to_value(v).map_err(|e| ToolError::Unknown(RepoError::new(e)))
}

/// Drops every zero count of the overview's count sections (and entries left empty), and says so.
/// Nothing but zeros is lost: a count missing from a compressed overview is 0.
pub fn compress_overview(value: Value) -> Value {
    if serde_json::to_string(&value).map_or(0, |s| s.len()) <= OVERVIEW_COMPRESS_BYTES {
        return value;
    }
    let mut value = value;
    if let Value::Object(top) = &mut value {
        for section in ["channels", "webhooks", "inbox", "ai_agents", "labels", "team_members"] {
            if let Some(s) = top.get_mut(section) {
                drop_zeros(s);
            }
        }
        top.insert("compressed".into(), Value::Bool(true));
        top.insert(
            "compression".into(),
            Value::String("zero counts omitted: a count that is missing is 0; no other figure is left out".into()),
        );
    }
    value
}

fn drop_zeros(v: &mut Value) {
    if let Value::Object(m) = v {
        for child in m.values_mut() {
            drop_zeros(child);
        }
        m.retain(|_, c| match c {
            Value::Number(n) => n.as_i64() != Some(0),
            Value::Object(o) => !o.is_empty(),
            _ => true,
        });
    }
}

/// `days` days ending `today`, oldest first.
fn days_until(today: Date, days: u16) -> impl Iterator<Item = Date> {
    let first = today.checked_sub(Duration::days(i64::from(days.max(1)) - 1)).unwrap_or(today);
    (0..i64::from(days.max(1))).filter_map(move |i| first.checked_add(Duration::days(i)))
}

fn period(range: String, today: Date, days: u16, time_zone: String) -> Period {
    let from = days_until(today, days).next().unwrap_or(today);
    Period { range, from, to: today, time_zone }
}

const DEFINITIONS: &[(&str, &str)] = &[
    ("sent", "outbound messages whose status is sent, delivered or read (queued and failed ones are not sent)"),
    ("delivered", "outbound messages whose status is delivered or read"),
    ("read", "outbound messages whose status is read"),
    ("failed", "outbound messages whose status is failed"),
    ("delivery_rate", "delivered / sent, a fraction from 0 to 1; null when nothing was sent"),
    ("read_rate", "read / delivered, a fraction from 0 to 1; null when nothing was delivered"),
    ("day", "each message counts on the calendar day it was created, in the period's time zone"),
];

fn platform_name(t: crate::channels::ChannelType) -> &'static str {
    match t {
        crate::channels::ChannelType::Whatsapp => "WhatsApp",
        crate::channels::ChannelType::Messenger => "Messenger",
        crate::channels::ChannelType::Instagram => "Instagram",
    }
}

/// The page the Messenger and Instagram note points to (`docs/product/analytics-messenger-instagram.md`).
pub const MESSENGER_INSTAGRAM_DOCS: &str = "/docs/analytics-messenger-instagram";

/// Shapes stored figures into the `get_channel_analytics` result: one zero-filled point per day,
/// totals and rates. Public so that the Analytics page shows exactly what the tool answers.
pub fn channel_analytics(stats: ChannelStats, range: String, days: u16) -> ChannelAnalytics {
    match stats {
        ChannelStats::OtherPlatform(channel) => ChannelAnalytics::OtherPlatform {
            note: format!(
                "Detailed delivery statistics are available for WhatsApp channels only. For the {} channel \
                 \"{}\", {MESSENGER_INSTAGRAM_DOCS} explains where Meta shows that platform's insights, and the \
                 Analytics page at /analytics shows its contacts and messages by country.",
                platform_name(channel.channel_type),
                channel.display_name
            ),
            channel,
            analytics: None,
        },
        ChannelStats::Whatsapp { asked, data } => {
            let WhatsappDays { channels, time_zone, today, days: rows } = data;
            let by_day: HashMap<Date, DeliveryCounts> = rows.into_iter().collect();
            let mut totals = DeliveryCounts::default();
            let daily: Vec<DailyDelivery> = days_until(today, days)
                .map(|date| {
                    let counts = by_day.get(&date).copied().unwrap_or_default();
                    totals.add(&counts);
                    DailyDelivery { date, counts, delivery_rate: counts.delivery_rate(), read_rate: counts.read_rate() }
                })
                .collect();
            let note = channels.is_empty().then(|| "This workspace has no WhatsApp channel yet.".to_owned());
            ChannelAnalytics::Whatsapp {
                channel: asked,
                channels,
                period: period(range, today, days, time_zone),
                analytics: WhatsappAnalytics {
                    totals,
                    delivery_rate: totals.delivery_rate(),
                    read_rate: totals.read_rate(),
                    daily,
                    definitions: DEFINITIONS.iter().copied().collect(),
                },
                note,
            }
        }
    }
}

fn contact_report(
    lookup: Lookup,
    contact: super::model::ContactProfile,
    q: &ContactQuery,
    facts: ContactFacts,
) -> ContactReport {
    let ContactFacts { time_zone, today, label_exists, threads, days: rows, responders } = facts;
    let mut notes = Vec::new();
    if let (Some(label), false) = (&q.label, label_exists) {
        notes.push(format!("This workspace has no label named \"{label}\", so no conversation matches it."));
    }

    let mut by_status: BTreeMap<String, i64> = BTreeMap::new();
    let mut channels: BTreeMap<i64, ChannelRef> = BTreeMap::new();
    let mut labels: BTreeSet<String> = BTreeSet::new();
    let mut assignments: Vec<Assignment> = Vec::new();
    for t in &threads {
        *by_status.entry(t.status.clone()).or_default() += 1;
        channels.entry(t.channel.id.0).or_insert_with(|| t.channel.clone());
        labels.extend(t.labels.iter().cloned());
        if let Some(a) = &t.assignee {
            match assignments.iter_mut().find(|x| x.assignee.kind == a.kind && x.assignee.id == a.id) {
                Some(x) => x.threads += 1,
                None => assignments.push(Assignment { assignee: a.clone(), threads: 1 }),
            }
        }
    }
    assignments.sort_by(|a, b| b.threads.cmp(&a.threads).then_with(|| a.assignee.name.cmp(&b.assignee.name)));
    let summary = ContactSummary {
        threads_total: threads.len() as i64,
        open: by_status.get("open").copied().unwrap_or(0),
        resolved: by_status.get("resolved").copied().unwrap_or(0),
        by_status,
        unread_messages: threads.iter().map(|t| t.unread_messages).sum(),
        channels_used: channels.into_values().collect(),
    };

    let by_day: HashMap<Date, ContactDay> = rows.into_iter().map(|d| (d.date, d)).collect();
    let daily: Vec<ContactDay> =
        days_until(today, q.days).map(|date| by_day.get(&date).copied().unwrap_or(ContactDay::empty(date))).collect();
    let sum = |f: fn(&ContactDay) -> i64| daily.iter().map(f).sum::<i64>();
    let billable = sum(|d| d.billable_templates);
    let time_based = ContactActivity {
        inbound: sum(|d| d.inbound),
        outbound: sum(|d| d.outbound),
        outbound_human: sum(|d| d.outbound_human),
        outbound_ai: sum(|d| d.outbound_ai),
        template_sends: sum(|d| d.template_sends),
        delivered: sum(|d| d.delivered),
        read: sum(|d| d.read),
        failed: sum(|d| d.failed),
        daily,
    };
    let (pricing_country, rate) = pricing::template_rate(contact.country.as_deref());
    let cost_based = ContactCost {
        estimated_outbound_cost_usd: pricing::estimate(billable, rate),
        template_count: billable,
        rate_per_template_usd: rate,
        pricing_country,
        disclaimer: pricing::DISCLAIMER,
    };

    let total = threads.len();
    let conversations: Vec<_> = threads.into_iter().take(MAX_CONVERSATIONS).collect();
    if total > MAX_CONVERSATIONS {
        notes.push(format!(
            "The contact has {total} conversations; the {MAX_CONVERSATIONS} with the latest activity are listed."
        ));
    }
    ContactReport {
        lookup,
        period: period(q.range.clone(), today, q.days, time_zone),
        label: q.label.clone(),
        contact,
        summary,
        time_based,
        cost_based,
        labels: labels.into_iter().collect(),
        support_team: SupportTeam { responders, primary_assignments: assignments },
        conversations,
        notes,
    }
}

/// A URL without user-info, query and fragment (`https://hooks.example.com/path`); something that
/// does not parse as a URL is hidden whole.
fn redacted_url(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => "(hidden)".to_owned(),
    }
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
