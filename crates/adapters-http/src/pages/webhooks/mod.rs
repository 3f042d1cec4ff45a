//! `/settings/integrations/webhooks`: destinations (list, create, edit, activate or deactivate,
//! delete), their signing secrets (reveal, rotate), the delivery log with retries, and test
//! events. The same [`domain::webhooks::WebhookService`] as the settings API and `/v1/webhooks`.

pub mod active;
pub mod create;
pub mod delete;
pub mod detail;
pub mod list;
pub mod replay;
pub mod retry;
pub mod secret;
pub mod test;
pub mod update;
pub mod view;

use actix_web::http::header;
use actix_web::HttpResponse;
use domain::webhooks::{DestinationId, WebhookError};
use domain::workspace::{PlanTier, WorkspaceId};

use super::form::FormData;
use super::session::{flash_cookie, Signed};
use super::{PageError, PagesState};

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
    Ok(s.plan_required.is_none().then_some(s.member.workspace_id))
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

/// The page error of a webhooks failure that is not about the input.
pub fn page_error(e: WebhookError) -> PageError {
    match e {
        WebhookError::NotFound => {
            PageError::NotFound("This webhook destination or delivery does not exist (any more).".into())
        }
        WebhookError::Invalid(v) => PageError::BadRequest(v.to_string()),
        WebhookError::InProgress | WebhookError::SecretUnreadable => PageError::BadRequest(e.to_string()),
        WebhookError::Unknown(e) => e.into(),
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
}

impl DestinationForm {
    /// Reads the submitted form.
    pub fn read(form: &FormData) -> Self {
        Self {
            url: form.text("url"),
            platform: form.text("platform"),
            events: form.all("events"),
            active: form.get("active").is_some(),
        }
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
}

impl FormErrors {
    /// Sorts validation failures by field (`events[2]` belongs to the events).
    pub fn from_validation(v: domain::ValidationErrors) -> Self {
        let mut e = FormErrors::default();
        for f in v.0 {
            let slot = if f.field.starts_with("events") {
                &mut e.events
            } else if f.field == "platform" {
                &mut e.platform
            } else {
                &mut e.url
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
    if field.starts_with("events") {
        "Events:"
    } else if field == "platform" {
        "The platform"
    } else {
        "The URL"
    }
}
