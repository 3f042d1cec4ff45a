//! `POST /settings/integrations/webhooks/{webhook_id}`: edit URL, platform and events.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::webhooks::{DestinationPatch, WebhookError};

use super::detail::load_log;
use super::view::{detail_page, DetailView};
use super::{action_workspace, back, destination, detail_path, page_error, DestinationForm, FormErrors};
use crate::pages::session::{SessionForm, Signed};
use crate::pages::PageError;
use crate::state::AppState;

/// Saves the edit form; invalid input comes back with the errors beside the fields.
///
/// # Errors
/// [`PageError::NotFound`], [`PageError::Csrf`].
pub async fn update(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64,)>,
    SessionForm(form): SessionForm,
) -> Result<HttpResponse, PageError> {
    let ws = action_workspace(&s)?;
    let audit = meta.member(s.member.user_id, s.member.role);
    let id = destination(path.0);
    let f = DestinationForm::read(&form);
    let patch = DestinationPatch {
        url: Some(f.url.clone()),
        platform: Some(if f.platform.is_empty() { "custom".to_owned() } else { f.platform.clone() }),
        events: Some(f.events.clone()),
        active: None,
    };
    match state.webhooks.update(ws, &audit, id, patch).await {
        Ok(d) => Ok(back(&state.pages, &detail_path(d.id), "Changes saved.")),
        Err(WebhookError::Invalid(v)) => {
            let d = state.webhooks.get(ws, id).await.map_err(page_error)?;
            let mut view = DetailView {
                form: DestinationForm { active: d.active, ..f },
                errors: FormErrors::from_validation(v),
                ..DetailView::default()
            };
            load_log(&state, ws, &d, None, &mut view).await?;
            Ok(detail_page(&s, &d, &view, StatusCode::UNPROCESSABLE_ENTITY))
        }
        Err(e) => Err(page_error(e)),
    }
}
