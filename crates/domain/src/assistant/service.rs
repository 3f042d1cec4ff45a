//! Running a tool: validate the call, read through the ports, shape the result.

use std::sync::Arc;

use serde_json::Value;

use super::model::{ChannelList, ContactAnalytics, Lookup};
use super::ports::{ChannelStatsError, ContactKey, LiveData};
use super::registry::{ContactQuery, ToolCall, ToolName};
use super::reports::{channel_analytics, contact_report};
use crate::access::{authorize, authorize_tool, Action, Caller, Denied};
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::ports::Clock;
use crate::docs::{DocsLibrary, DocsSearch, SearchError};
use crate::reports::{ReportError, ReportsService};
use crate::workspace::WorkspaceId;

/// The overview is compacted above this many bytes of JSON when compression is on
/// (`docs/assistant.md`, "`get_workspace_overview`").
pub const OVERVIEW_COMPRESS_BYTES: usize = 2048;

/// Why a tool call produced no result.
///
/// One enum for all seven tools, unlike the one-enum-per-operation rule elsewhere: the operation is
/// "run the tool named in the request" ([`Assistant::execute`], the MCP `tools/call`), whose tool
/// is data, so no caller knows at compile time which tool it runs, and every tool can fail in each
/// of these ways (an argument or id to correct, a caller the access policy refuses the tool, a
/// search or report not configured, storage).
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// Unknown tool, unknown or invalid argument, or an id the workspace does not have: the caller
    /// (or the model) can correct it. Each problem is named.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// The access policy does not let this caller run this tool ([`authorize_tool`]): the
    /// conversation report is for admins and keys with `reports:read`.
    #[error(transparent)]
    Denied(#[from] Denied),
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
    reports: Option<Arc<ReportsService>>,
    library: Arc<DocsLibrary>,
    clock: Arc<dyn Clock>,
    settings: AssistantSettings,
}

impl std::fmt::Debug for Assistant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assistant")
            .field("settings", &self.settings)
            .field("docs", &self.docs.is_some())
            .field("reports", &self.reports.is_some())
            .finish()
    }
}

impl Assistant {
    /// The five live-data tools on `data`; `search_product_docs` and `get_conversation_report`
    /// answer "not configured" until [`Assistant::with_docs`] and [`Assistant::with_reports`]
    /// register the search and the reports.
    pub fn new(data: Arc<dyn LiveData>, clock: Arc<dyn Clock>, settings: AssistantSettings) -> Self {
        Self { data, docs: None, reports: None, library: Arc::default(), clock, settings }
    }

    /// Registers the documentation search behind `search_product_docs`.
    #[must_use]
    pub fn with_docs(mut self, docs: Arc<dyn DocsSearch>) -> Self {
        self.docs = Some(docs);
        self
    }

    /// Registers the conversation reports behind `get_conversation_report`: the same service as
    /// `GET /v1/reports/conversations`, so the tool's figures are the endpoint's.
    #[must_use]
    pub fn with_reports(mut self, reports: Arc<ReportsService>) -> Self {
        self.reports = Some(reports);
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

    /// Validates and runs the tool named `tool` for workspace `ws`; the result as JSON. No caller
    /// is checked: the endpoints use [`Assistant::execute_as`].
    ///
    /// # Errors
    /// [`ToolError::Invalid`] naming the tool or argument; [`ToolError::Unavailable`];
    /// [`ToolError::Unknown`] on infrastructure failures.
    pub async fn execute(&self, ws: WorkspaceId, tool: &str, arguments: &Value) -> Result<Value, ToolError> {
        let call = ToolCall::parse(tool, arguments)?;
        self.run(ws, call).await
    }

    /// [`Assistant::execute`] for `caller`: a tool the policy does not let the caller run is
    /// refused ([`authorize_tool`]) before its arguments are looked at, as a REST request is
    /// refused before its query is, and what the caller may not see is left out. Webhook
    /// destination URLs can hold credentials (user-info, query tokens), so only callers the policy
    /// lets read webhooks see them whole; others get them without user-info, query and fragment.
    ///
    /// # Errors
    /// As [`Assistant::execute`], and [`ToolError::Denied`].
    pub async fn execute_as(&self, caller: &Caller, tool: &str, arguments: &Value) -> Result<Value, ToolError> {
        if let Some(name) = ToolName::parse(tool) {
            authorize_tool(caller, name)?;
        }
        let call = ToolCall::parse(tool, arguments)?;
        if let ToolCall::ListWebhooks { active_only } = call {
            let mut list = self.data.webhooks(caller.workspace_id, active_only).await?;
            // The plan does not matter here: below it there are no destinations to show.
            let whole = matches!(authorize(caller, Action::WebhooksRead), Ok(()) | Err(Denied::PlanRequired { .. }));
            if !whole {
                for w in &mut list.webhooks {
                    w.url = crate::webhooks::public_url(&w.url);
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
            ToolCall::ConversationReport(query) => {
                let reports = self.reports.as_ref().ok_or_else(|| {
                    ToolError::Unavailable("conversation reports are not configured on this installation".into())
                })?;
                let report = reports.conversations(ws, &query).await.map_err(|e| match e {
                    ReportError::Invalid(v) => ToolError::Invalid(v),
                    ReportError::Unknown(e) => ToolError::Unknown(e),
                })?;
                to_json(&report)
            }
        }
    }

    async fn contact_analytics(
        &self,
        ws: WorkspaceId,
        q: ContactQuery,
        now: time::OffsetDateTime,
    ) -> Result<ContactAnalytics, ToolError> {
        // A name alone never identifies a contact (`docs/assistant.md`, "`get_contact_analytics`").
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

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
