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

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest, HttpResponse};
use domain::audit::AuditContext;
use domain::webhooks::DestinationId;
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
            let audit = meta.member(signed.member.user_id, signed.member.role);
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
