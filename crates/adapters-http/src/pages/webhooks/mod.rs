//! `/settings/integrations/webhooks`: destinations (list, create, edit, activate or deactivate,
//! delete), their signing secrets (reveal, rotate), the delivery log with retries, and test
//! events. The same [`domain::webhooks::WebhookService`] as the settings API and `/v1/webhooks`.

pub mod active;
pub mod create;
pub mod delete;
pub mod detail;
mod health;
pub mod list;
pub mod replay;
pub mod retry;
pub mod secret;
pub mod test;
pub mod update;
pub mod view;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest, HttpResponse};
use domain::audit::AuditContext;
use domain::common::error::FieldError;
use domain::webhooks::controls::{DestinationControls, EventFilter};
use domain::webhooks::{ControlsInput, DestinationId};
use domain::workspace::{PlanTier, WorkspaceId};
use serde::Deserialize;

use super::form::FormData;
use super::session::{flash_cookie, SessionForm, Signed};
use super::{PageError, PagesState};
use crate::audit_context::RequestMeta;
use crate::error::ApiError;

/// The list's path.
pub const PATH: &str = "/settings/integrations/webhooks";
/// The plan that includes webhooks (the policy's).
pub const WEBHOOK_PLAN: PlanTier = domain::access::WEBHOOKS_PLAN;

/// The path of one destination's page.
pub fn detail_path(id: DestinationId) -> String {
    format!("{PATH}/{}", id.0)
}

/// The workspace; `None` below the plan (the page explains the plan instead). Who may see the
/// pages at all is the access policy's decision, taken before the handler ([`crate::access`]).
///
/// # Errors
/// None today; kept fallible for the pages' `?` flow.
pub fn workspace(s: &Signed) -> Result<Option<WorkspaceId>, PageError> {
    Ok(s.plan_required.is_none().then_some(s.caller.workspace_id))
}

/// Like [`workspace`], for actions: below the plan there is nothing to act on.
///
/// # Errors
/// [`PageError::Forbidden`] for agents and below the plan.
pub fn action_workspace(s: &Signed) -> Result<WorkspaceId, PageError> {
    workspace(s)?.ok_or_else(|| {
        PageError::Forbidden(format!("webhooks need the {} plan; the workspace is on {}", WEBHOOK_PLAN, s.plan()))
    })
}

/// The page error of a webhooks failure that is not about the input: what the API would answer
/// (`domain_errors.rs` maps each operation's error once), in the pages' words.
pub fn page_error(e: impl Into<ApiError>) -> PageError {
    match e.into() {
        ApiError::NotFound(_) => {
            PageError::NotFound("This webhook destination or delivery does not exist (any more).".into())
        }
        ApiError::Internal(e) => domain::RepoError(e).into(),
        other => PageError::BadRequest(other.to_string()),
    }
}

/// The destination id of a path.
pub fn destination(id: i64) -> DestinationId {
    DestinationId(id)
}

/// A redirect with a message.
pub fn back(pages: &PagesState, location: &str, message: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location.to_owned()))
        .cookie(flash_cookie(pages, message))
        .finish()
}

/// A form action on one destination (`{PATH}/{webhook_id}/…`): the signed-in member, the
/// workspace, the audit context, the destination of the path and the form, whose anti-forgery
/// token has been checked. Read in the order the handlers read them before: the session, the path,
/// the form, then the plan.
#[derive(Debug)]
pub struct DestinationAction {
    /// The signed-in member.
    pub signed: Signed,
    /// Their workspace, on a plan with webhooks.
    pub ws: WorkspaceId,
    /// Who acts, from where.
    pub audit: AuditContext,
    /// The destination of the path.
    pub id: DestinationId,
    /// The submitted form.
    pub form: FormData,
}

/// The `{webhook_id}` segment (a retry's path also has `{delivery_id}`).
#[derive(Debug, Deserialize)]
struct DestinationPath {
    webhook_id: i64,
}

impl FromRequest for DestinationAction {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let meta = RequestMeta::of(req);
        let signed = Signed::from_request(req, payload);
        let path = web::Path::<DestinationPath>::from_request(req, payload);
        let form = SessionForm::from_request(req, payload);
        Box::pin(async move {
            let signed = signed.await?;
            let id = destination(path.await?.webhook_id);
            let SessionForm(form) = form.await?;
            let ws = action_workspace(&signed)?;
            let audit = signed.audit(&meta);
            Ok(Self { signed, ws, audit, id, form })
        })
    }
}

/// The fields of the destination form.
#[derive(Debug, Clone, Default)]
pub struct DestinationForm {
    /// URL typed.
    pub url: String,
    /// Platform label typed.
    pub platform: String,
    /// Events ticked.
    pub events: Vec<String>,
    /// Whether "active" is ticked.
    pub active: bool,
    /// The delivery controls typed (the edit form only).
    pub controls: ControlsForm,
}

impl DestinationForm {
    /// Reads the submitted form.
    pub fn read(form: &FormData) -> Self {
        Self {
            url: form.text("url"),
            platform: form.text("platform"),
            events: form.all("events"),
            active: form.get("active").is_some(),
            controls: ControlsForm::read(form),
        }
    }
}

/// The delivery controls as typed: each field `None` when the form did not have it (the create
/// form, or a form of an older page), so that submitting it leaves that control as it is.
#[derive(Debug, Clone, Default)]
pub struct ControlsForm {
    /// `rate_limit_per_second`; blank: no cap.
    pub rate_limit_per_second: Option<String>,
    /// `max_in_flight`; blank: no cap.
    pub max_in_flight: Option<String>,
    /// One `Name: value` per line.
    pub headers: Option<String>,
    /// Channel ids, separated by commas or spaces.
    pub filter_channel_ids: Option<String>,
    /// Label names, separated by commas.
    pub filter_labels: Option<String>,
    /// `none` or `per_thread`.
    pub ordering: Option<String>,
}

impl ControlsForm {
    /// Reads the controls of a submitted form.
    pub fn read(form: &FormData) -> Self {
        let field = |name: &str| form.get(name).map(str::to_owned);
        Self {
            rate_limit_per_second: field("rate_limit_per_second"),
            max_in_flight: field("max_in_flight"),
            headers: field("headers"),
            filter_channel_ids: field("filter_channel_ids"),
            filter_labels: field("filter_labels"),
            ordering: field("ordering"),
        }
    }

    /// The form of a destination's current controls.
    pub fn of(c: &DestinationControls) -> Self {
        let filter = c.filter.clone().unwrap_or_default();
        Self {
            rate_limit_per_second: Some(c.rate_limit_per_second.map(|v| v.to_string()).unwrap_or_default()),
            max_in_flight: Some(c.max_in_flight.map(|v| v.to_string()).unwrap_or_default()),
            headers: Some(c.headers.iter().map(|(k, v)| format!("{k}: {v}\n")).collect()),
            filter_channel_ids: Some(filter.channel_ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")),
            filter_labels: Some(filter.labels.join(", ")),
            ordering: Some(c.ordering.as_str().to_owned()),
        }
    }

    /// The controls to change, or the fields that are not even well formed (the service checks
    /// the rest, with the same messages as the API).
    ///
    /// # Errors
    /// [`domain::ValidationErrors`] naming each control that does not parse.
    pub fn input(&self) -> Result<ControlsInput, domain::ValidationErrors> {
        let mut errors = Vec::new();
        let mut cap = |field: &'static str, raw: &Option<String>| -> Option<Option<i64>> {
            let raw = raw.as_deref()?.trim();
            if raw.is_empty() {
                return Some(None);
            }
            match raw.parse::<i64>() {
                Ok(v) => Some(Some(v)),
                Err(_) => {
                    errors.push(FieldError::new(field, "must be a whole number, or blank for no cap"));
                    None
                }
            }
        };
        let rate_limit_per_second = cap("rate_limit_per_second", &self.rate_limit_per_second);
        let max_in_flight = cap("max_in_flight", &self.max_in_flight);
        let mut headers = None;
        if let Some(text) = &self.headers {
            let mut map = BTreeMap::new();
            for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
                match line.split_once(':') {
                    Some((name, value)) => {
                        map.insert(name.trim().to_owned(), value.trim().to_owned());
                    }
                    // The line is not repeated: it may be a value typed without its name.
                    None => errors.push(FieldError::new("headers", "each line must be `Name: value`")),
                }
            }
            headers = Some(map);
        }
        let mut filter = None;
        if self.filter_channel_ids.is_some() || self.filter_labels.is_some() {
            let mut channel_ids = Vec::new();
            for raw in self.filter_channel_ids.as_deref().unwrap_or("").split([',', ' ']).filter(|s| !s.is_empty()) {
                match raw.parse::<i64>() {
                    Ok(id) => channel_ids.push(id),
                    Err(_) => errors.push(FieldError::new("filter", format!("`{raw}` is not a channel id"))),
                }
            }
            let labels: Vec<String> = self
                .filter_labels
                .as_deref()
                .unwrap_or("")
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            filter = Some(if channel_ids.is_empty() && labels.is_empty() {
                None
            } else {
                Some(EventFilter { channel_ids, labels })
            });
        }
        if !errors.is_empty() {
            return Err(domain::ValidationErrors(errors));
        }
        Ok(ControlsInput {
            rate_limit_per_second,
            max_in_flight,
            headers,
            filter,
            ordering: self.ordering.as_deref().map(|o| o.trim().to_owned()),
        })
    }
}

/// Errors beside the fields of the destination form.
#[derive(Debug, Clone, Default)]
pub struct FormErrors {
    /// Beside the URL.
    pub url: Option<String>,
    /// Beside the platform.
    pub platform: Option<String>,
    /// Beside the events.
    pub events: Option<String>,
    /// Beside the rate limit.
    pub rate_limit_per_second: Option<String>,
    /// Beside the in-flight cap.
    pub max_in_flight: Option<String>,
    /// Beside the static headers.
    pub headers: Option<String>,
    /// Beside the filter.
    pub filter: Option<String>,
    /// Beside the ordering.
    pub ordering: Option<String>,
}

impl FormErrors {
    /// Sorts validation failures by field (`events[2]` belongs to the events).
    pub fn from_validation(v: domain::ValidationErrors) -> Self {
        let mut e = FormErrors::default();
        for f in v.0 {
            let slot = match f.field.as_str() {
                events if events.starts_with("events") => &mut e.events,
                "platform" => &mut e.platform,
                "rate_limit_per_second" => &mut e.rate_limit_per_second,
                "max_in_flight" => &mut e.max_in_flight,
                "headers" => &mut e.headers,
                "filter" => &mut e.filter,
                "ordering" => &mut e.ordering,
                _ => &mut e.url,
            };
            let text = format!("{} {}.", label(&f.field), f.message);
            *slot = Some(match slot.take() {
                Some(prev) => format!("{prev} {text}"),
                None => text,
            });
        }
        e
    }
}

fn label(field: &str) -> &'static str {
    match field {
        events if events.starts_with("events") => "Events:",
        "platform" => "The platform",
        "rate_limit_per_second" => "The rate limit",
        "max_in_flight" => "The in-flight cap",
        "headers" => "Headers:",
        "filter" => "Filter:",
        "ordering" => "The ordering",
        _ => "The URL",
    }
}
