//! The WhatsApp template catalogue of a channel: the message templates of its WhatsApp Business
//! Account (WABA) as Meta last reported them, synced from the Graph API (when credentials are set,
//! on demand, periodically) and updated at once by Meta's `message_template_status_update`
//! callbacks. A template send is checked against it before anything is stored, so a typo, a
//! language mismatch, a template not approved or a wrong number of parameters is a 422 instead of
//! a message that fails at Meta minutes later.

use async_trait::async_trait;
use time::OffsetDateTime;

use super::model::{ChannelCredentials, Template};
use crate::channels::{ChannelId, ChannelType};
use crate::common::error::{FieldError, RepoError, ValidationErrors};
use crate::webhooks::DomainEvent;
use crate::workspace::WorkspaceId;

/// A template's review status at Meta.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TemplateStatus {
    /// May be sent.
    Approved,
    /// In review (or in appeal).
    Pending,
    /// Refused by Meta's review.
    Rejected,
    /// Paused by Meta for low quality.
    Paused,
    /// Disabled (or being deleted).
    Disabled,
}

impl TemplateStatus {
    /// Every status.
    pub const ALL: [TemplateStatus; 5] = [
        TemplateStatus::Approved,
        TemplateStatus::Pending,
        TemplateStatus::Rejected,
        TemplateStatus::Paused,
        TemplateStatus::Disabled,
    ];

    /// Wire and stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            TemplateStatus::Approved => "approved",
            TemplateStatus::Pending => "pending",
            TemplateStatus::Rejected => "rejected",
            TemplateStatus::Paused => "paused",
            TemplateStatus::Disabled => "disabled",
        }
    }

    /// The stored name back as a value.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// Meta's status (`APPROVED`, `IN_APPEAL`, `PENDING_DELETION`, …) in wms's five words; one
    /// Meta may add later counts as not sendable (`disabled`) until wms knows it.
    pub fn from_meta(s: &str) -> Self {
        match s.to_ascii_uppercase().as_str() {
            "APPROVED" | "REINSTATED" => TemplateStatus::Approved,
            "PENDING" | "IN_APPEAL" => TemplateStatus::Pending,
            "REJECTED" => TemplateStatus::Rejected,
            "PAUSED" | "FLAGGED" => TemplateStatus::Paused,
            _ => TemplateStatus::Disabled,
        }
    }

    /// The status an event of Meta's `message_template_status_update` callback leaves, or `None`
    /// for an event that does not change whether the template can be sent: `LOCKED` and
    /// `UNLOCKED` (about editing), `LIMIT_EXCEEDED` (about the account's number of templates) and
    /// `UNARCHIVED` (back to a status the event does not say; the periodic sync reads it).
    /// `REINSTATED` is a paused template sendable again; other events read as statuses.
    pub fn of_event(event: &str) -> Option<Self> {
        match event.to_ascii_uppercase().as_str() {
            "LOCKED" | "UNLOCKED" | "LIMIT_EXCEEDED" | "UNARCHIVED" => None,
            other => Some(Self::from_meta(other)),
        }
    }
}

/// One template of a channel's catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WhatsappTemplate {
    /// Its name at Meta.
    pub name: String,
    /// Its language code (`en_US`).
    pub language: String,
    /// `MARKETING`, `UTILITY` or `AUTHENTICATION`, as Meta says.
    pub category: String,
    /// Review status.
    pub status: TemplateStatus,
    /// Meta's quality rating (`GREEN`, `YELLOW`, `RED`, `UNKNOWN`), when given.
    pub quality: Option<String>,
    /// The number of body placeholders (`{{1}}`, `{{2}}`, …).
    pub parameters: i32,
    /// The body text with its placeholders.
    pub body: String,
    /// Why Meta rejected or paused it, when it said.
    pub rejected_reason: Option<String>,
    /// When wms last learnt of a change.
    pub updated_at: OffsetDateTime,
}

impl WhatsappTemplate {
    /// The body as the recipient reads it: each placeholder `{{n}}` replaced by the `n`-th of
    /// `parameters` (a placeholder without one is left as it is), cut to `max_chars` characters.
    /// What a template send without `content` stores as the message's text.
    pub fn filled(&self, parameters: &[String], max_chars: usize) -> String {
        let mut out = String::with_capacity(self.body.len());
        let mut rest = self.body.as_str();
        while let Some(open) = rest.find("{{") {
            out.push_str(&rest[..open]);
            let after = &rest[open + 2..];
            let value = after.find("}}").and_then(|close| {
                let n: usize = after[..close].trim().parse().ok()?;
                let value = parameters.get(n.checked_sub(1)?)?;
                Some((value, close))
            });
            match value {
                Some((value, close)) => {
                    out.push_str(value);
                    rest = &after[close + 2..];
                }
                None => {
                    out.push_str("{{");
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out.chars().take(max_chars).collect()
    }
}

/// A template as the REST API returns it (`GET /v1/channels/:channel_id/templates`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TemplateRecord {
    /// Its name at Meta.
    #[cfg_attr(feature = "openapi", schema(example = "order_shipped"))]
    pub name: String,
    /// Its language code.
    #[cfg_attr(feature = "openapi", schema(example = "en_US"))]
    pub language: String,
    /// `MARKETING`, `UTILITY` or `AUTHENTICATION`, as Meta says.
    #[cfg_attr(feature = "openapi", schema(example = "UTILITY"))]
    pub category: String,
    /// `approved`, `pending`, `rejected`, `paused` or `disabled`; only `approved` ones can be sent.
    #[cfg_attr(feature = "openapi", schema(example = "approved"))]
    pub status: String,
    /// Meta's quality rating (`GREEN`, `YELLOW`, `RED`, `UNKNOWN`), when given.
    pub quality: Option<String>,
    /// How many body placeholders it has: a send passes exactly that many `parameters`.
    pub parameters: i32,
    /// The body text with its placeholders (`{{1}}`).
    pub body: String,
    /// Why Meta rejected or paused it, when it said.
    pub rejected_reason: Option<String>,
    /// When wms last learnt of a change (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub updated_at: OffsetDateTime,
}

impl From<WhatsappTemplate> for TemplateRecord {
    fn from(t: WhatsappTemplate) -> Self {
        Self {
            name: t.name,
            language: t.language,
            category: t.category,
            status: t.status.as_str().to_owned(),
            quality: t.quality,
            parameters: t.parameters,
            body: t.body,
            rejected_reason: t.rejected_reason,
            updated_at: t.updated_at,
        }
    }
}

/// The `data` of `template.status_updated`: the template record and its channel.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TemplateEventRecord {
    /// The channel whose catalogue holds it.
    pub channel_id: i64,
    /// The template.
    #[serde(flatten)]
    pub template: TemplateRecord,
}

impl TemplateEventRecord {
    /// The record as event `data`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// The number of distinct body placeholders (`{{1}}` … `{{n}}`, or named ones) of a body.
pub fn count_parameters(body: &str) -> i32 {
    let mut seen: Vec<&str> = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let name = after[..end].trim();
        if !name.is_empty() && !seen.contains(&name) {
            seen.push(name);
        }
        rest = &after[end + 2..];
    }
    i32::try_from(seen.len()).unwrap_or(i32::MAX)
}

/// Why a template send is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateRefusal {
    /// No template of that name and language in the channel's catalogue (422 naming
    /// `template.name`).
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Known but not approved (422 `template_not_approved`).
    #[error("template {name} ({language}) is {}; only approved templates can be sent", .status.as_str())]
    NotApproved {
        /// Its name.
        name: String,
        /// Its language.
        language: String,
        /// Its status.
        status: TemplateStatus,
    },
}

/// Checks a template send against the catalogue entry of its name and language.
///
/// # Errors
/// [`TemplateRefusal`].
pub fn check_template_send(send: &Template, entry: Option<&WhatsappTemplate>) -> Result<(), TemplateRefusal> {
    let Some(t) = entry else {
        return Err(ValidationErrors::one(
            "template.name",
            format!(
                "no template {} in language {} on this channel; list them with GET /v1/channels/:channel_id/templates",
                send.name, send.language
            ),
        )
        .into());
    };
    if t.status != TemplateStatus::Approved {
        return Err(TemplateRefusal::NotApproved {
            name: t.name.clone(),
            language: t.language.clone(),
            status: t.status,
        });
    }
    let given = send.parameters.len();
    if i64::try_from(given).ok() != Some(i64::from(t.parameters)) {
        return Err(ValidationErrors(vec![FieldError::new(
            "template.parameters",
            format!("template {} takes {} parameters; {given} given", t.name, t.parameters),
        )])
        .into());
    }
    Ok(())
}

/// A status change Meta reported for a template of a WABA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateStatusChange {
    /// The template's name.
    pub name: String,
    /// Its language, when Meta gave it (else every language of the name changes).
    pub language: Option<String>,
    /// The new status.
    pub status: TemplateStatus,
    /// Meta's reason, when it gave one (`NONE` is none).
    pub reason: Option<String>,
}

/// A template whose status a callback changed, with its channel (the `template.status_updated`
/// event's subject).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedTemplate {
    /// The workspace.
    pub workspace_id: WorkspaceId,
    /// The channel.
    pub channel_id: ChannelId,
    /// The template as it is now.
    pub template: WhatsappTemplate,
}

impl ChangedTemplate {
    /// `template.status_updated`, with the template as it is now and its channel. Every template a
    /// status change of Meta's names is announced, even when its status was already that one:
    /// the event repeats what Meta reported, it is not a diff of the catalogue.
    pub fn event(&self) -> DomainEvent {
        DomainEvent::TemplateStatusUpdated(TemplateEventRecord {
            channel_id: self.channel_id.0,
            template: TemplateRecord::from(self.template.clone()),
        })
    }
}

/// A WhatsApp channel whose templates are due to be synced, with its sealed credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncTarget {
    /// The workspace.
    pub workspace_id: WorkspaceId,
    /// The channel.
    pub channel_id: ChannelId,
    /// Its sealed credentials (access token and WABA id).
    pub credentials_sealed: Vec<u8>,
}

/// A channel as a sync of its catalogue sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncFacts {
    /// Its platform: only WhatsApp channels have templates ([`ChannelType::has_templates`]).
    pub channel_type: ChannelType,
    /// Where its templates come from, once it has credentials and a WABA id.
    pub target: Option<SyncTarget>,
}

impl SyncTarget {
    /// A WhatsApp channel's sync target: its catalogue can be synced only once it has credentials
    /// and a WhatsApp Business Account id (Meta lists templates per WABA); `None` otherwise.
    pub fn of(
        workspace_id: WorkspaceId,
        channel_id: ChannelId,
        credentials_sealed: Option<Vec<u8>>,
        waba_id: Option<&str>,
    ) -> Option<SyncTarget> {
        let credentials_sealed = credentials_sealed?;
        waba_id?;
        Some(SyncTarget { workspace_id, channel_id, credentials_sealed })
    }
}

/// Where templates come from: Meta's `GET /{waba_id}/message_templates`.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait TemplateSource: Send + Sync {
    /// Every template of the credentials' WABA (all pages).
    ///
    /// # Errors
    /// A sentence saying why Meta could not be read.
    async fn fetch(&self, credentials: &ChannelCredentials) -> Result<Vec<WhatsappTemplate>, String>;
}

/// The stored catalogues. Every method is scoped by the workspace, but the callbacks' (by WABA).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait TemplateStore: Send + Sync {
    /// The channel's template of that name and language.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn find(
        &self,
        ws: WorkspaceId,
        channel: ChannelId,
        name: &str,
        language: &str,
    ) -> Result<Option<WhatsappTemplate>, RepoError>;

    /// The channel's templates by name and language; `None` when the channel is not the
    /// workspace's.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn list(&self, ws: WorkspaceId, channel: ChannelId) -> Result<Option<Vec<WhatsappTemplate>>, RepoError>;

    /// What a sync of the workspace's channel needs: its type, and its sync target when it has
    /// credentials and a WABA id ([`SyncTarget::of`]); `None` when there is no such channel.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn sync_facts(&self, ws: WorkspaceId, channel: ChannelId) -> Result<Option<SyncFacts>, RepoError>;

    /// Replaces the channel's catalogue by `templates` (those gone at Meta disappear), marking it
    /// synced now.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn replace(
        &self,
        ws: WorkspaceId,
        channel: ChannelId,
        templates: &[WhatsappTemplate],
    ) -> Result<(), RepoError>;

    /// Claims up to `limit` channels whose last sync is older than `every_secs` (`FOR UPDATE SKIP
    /// LOCKED`, marking them synced now, so another instance does not take them too).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn claim_due(&self, every_secs: i64, limit: i64) -> Result<Vec<SyncTarget>, RepoError>;

    /// The channels holding one of `waba_ids` (every workspace), each with its WABA id and sealed
    /// credentials, in one query (to check a callback's signature).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn channels_for_wabas(&self, waba_ids: &[String]) -> Result<Vec<(String, SyncTarget)>, RepoError>;

    /// Applies status changes to the templates of `channels` (one transaction), recording
    /// `template.status_updated` for each template they name ([`ChangedTemplate::event`]); returns them.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn apply_status(
        &self,
        channels: &[SyncTarget],
        changes: &[TemplateStatusChange],
        at: OffsetDateTime,
    ) -> Result<Vec<ChangedTemplate>, RepoError>;
}

/// Whether a channel keeps its template catalogue when it is given new credentials: the
/// catalogue is its WhatsApp Business Account's, so it stays only while that account does (the
/// sync the new credentials start refreshes it); credentials of another account, or of none,
/// empty it at once, so no send is checked against another account's templates meanwhile.
pub fn keeps_catalogue(waba_before: Option<&str>, waba_after: Option<&str>) -> bool {
    waba_before.is_some() && waba_before == waba_after
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn a_body_is_filled_in_with_its_parameters() {
        let t = WhatsappTemplate {
            name: "t".into(),
            language: "en_US".into(),
            category: "UTILITY".into(),
            status: TemplateStatus::Approved,
            quality: None,
            parameters: 3,
            body: "Hi {{1}}, order {{ 2 }} ships {{3}}; {{x}} {{0}} {{".into(),
            rejected_reason: None,
            updated_at: datetime!(2026-11-27 00:00 UTC),
        };
        let p = ["Ann".to_owned(), "#12".to_owned()];
        assert_eq!(t.filled(&p, 4096), "Hi Ann, order #12 ships {{3}}; {{x}} {{0}} {{");
        assert_eq!(t.filled(&p, 6), "Hi Ann");
        // A parameter that looks like a placeholder is not filled in again.
        assert_eq!(
            t.filled(&["{{2}}".to_owned(), "x".to_owned()], 4096),
            "Hi {{2}}, order x ships {{3}}; {{x}} {{0}} {{"
        );
    }

    #[test]
    fn the_catalogue_stays_only_with_its_business_account() {
        assert!(keeps_catalogue(Some("waba-1"), Some("waba-1")));
        assert!(!keeps_catalogue(Some("waba-1"), Some("waba-2")));
        assert!(!keeps_catalogue(Some("waba-1"), None));
        assert!(!keeps_catalogue(None, None));
    }

    fn entry(status: TemplateStatus, parameters: i32) -> WhatsappTemplate {
        WhatsappTemplate {
            name: "order_update".into(),
            language: "en_US".into(),
            category: "UTILITY".into(),
            status,
            quality: None,
            parameters,
            body: "Hi {{1}}, order {{2}} shipped".into(),
            rejected_reason: None,
            updated_at: datetime!(2026-03-01 10:00:00 UTC),
        }
    }

    fn send(parameters: &[&str]) -> Template {
        Template {
            name: "order_update".into(),
            language: "en_US".into(),
            parameters: parameters.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    fn field(r: Result<(), TemplateRefusal>) -> Option<String> {
        match r {
            Err(TemplateRefusal::Invalid(v)) => v.0.first().map(|f| f.field.clone()),
            _ => None,
        }
    }

    #[test]
    fn only_a_channel_with_credentials_and_a_waba_can_sync() {
        let (ws, ch) = (WorkspaceId(1), ChannelId(2));
        assert_eq!(
            SyncTarget::of(ws, ch, Some(vec![1, 2]), Some("waba")),
            Some(SyncTarget { workspace_id: ws, channel_id: ch, credentials_sealed: vec![1, 2] })
        );
        assert_eq!(SyncTarget::of(ws, ch, Some(vec![1, 2]), None), None);
        assert_eq!(SyncTarget::of(ws, ch, None, Some("waba")), None);
        assert_eq!(SyncTarget::of(ws, ch, None, None), None);
    }

    #[test]
    fn an_approved_template_with_its_parameters_passes() {
        assert_eq!(check_template_send(&send(&["Ana", "42"]), Some(&entry(TemplateStatus::Approved, 2))), Ok(()));
    }

    #[test]
    fn an_unknown_name_or_language_names_template_name() {
        assert_eq!(field(check_template_send(&send(&[]), None)).as_deref(), Some("template.name"));
    }

    #[test]
    fn a_template_not_approved_is_refused_with_its_status() {
        for status in
            [TemplateStatus::Pending, TemplateStatus::Rejected, TemplateStatus::Paused, TemplateStatus::Disabled]
        {
            let r = check_template_send(&send(&["Ana", "42"]), Some(&entry(status, 2)));
            assert!(matches!(r, Err(TemplateRefusal::NotApproved { status: s, .. }) if s == status));
        }
    }

    #[test]
    fn a_wrong_parameter_count_names_template_parameters() {
        let r = check_template_send(&send(&["Ana"]), Some(&entry(TemplateStatus::Approved, 2)));
        assert_eq!(field(r).as_deref(), Some("template.parameters"));
    }

    #[test]
    fn placeholders_are_counted_once_each() {
        assert_eq!(count_parameters("Hi {{1}}, order {{2}} for {{1}}"), 2);
        assert_eq!(count_parameters("No placeholders"), 0);
        assert_eq!(count_parameters("Broken {{1"), 0);
    }

    #[test]
    fn a_status_change_is_announced_with_the_template_and_its_channel_even_when_the_status_stays() {
        let changed = ChangedTemplate {
            workspace_id: WorkspaceId(1),
            channel_id: ChannelId(9),
            template: entry(TemplateStatus::Approved, 2),
        };
        assert_eq!(
            changed.event(),
            DomainEvent::TemplateStatusUpdated(TemplateEventRecord {
                channel_id: 9,
                template: TemplateRecord::from(entry(TemplateStatus::Approved, 2)),
            })
        );
    }

    #[test]
    fn metas_statuses_map_to_five_words() {
        assert_eq!(TemplateStatus::from_meta("APPROVED"), TemplateStatus::Approved);
        assert_eq!(TemplateStatus::from_meta("IN_APPEAL"), TemplateStatus::Pending);
        assert_eq!(TemplateStatus::from_meta("PENDING_DELETION"), TemplateStatus::Disabled);
        assert_eq!(TemplateStatus::from_meta("PAUSED"), TemplateStatus::Paused);
        assert_eq!(TemplateStatus::from_meta("SOMETHING_NEW"), TemplateStatus::Disabled);
    }

    #[test]
    fn callback_events_leave_a_status_unless_they_are_about_something_else() {
        assert_eq!(TemplateStatus::of_event("REINSTATED"), Some(TemplateStatus::Approved));
        assert_eq!(TemplateStatus::of_event("PAUSED"), Some(TemplateStatus::Paused));
        assert_eq!(TemplateStatus::of_event("ARCHIVED"), Some(TemplateStatus::Disabled));
        assert_eq!(TemplateStatus::of_event("DISABLED"), Some(TemplateStatus::Disabled));
        for event in ["LOCKED", "UNLOCKED", "LIMIT_EXCEEDED", "UNARCHIVED", "locked"] {
            assert_eq!(TemplateStatus::of_event(event), None, "{event}");
        }
    }
}
