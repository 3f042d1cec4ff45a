//! `POST /settings/integrations/webhooks/{webhook_id}`: edit URL, platform, events and the
//! delivery controls (rate limit, in-flight cap, static headers, filter, ordering).

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::webhooks::{DestinationPatch, UpdateWebhookError};

use super::detail::load_log;
use super::view::{detail_page, DetailView};
use super::{back, detail_path, page_error, DestinationAction, DestinationForm, FormErrors};
use crate::pages::PageError;
use crate::state::AppState;

/// Saves the edit form; invalid input comes back with the errors beside the fields, as typed.
///
/// # Errors
/// [`PageError::NotFound`], [`PageError::Csrf`].
pub async fn update(a: DestinationAction, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    let f = DestinationForm::read(&a.form);
    let invalid = match f.controls.input() {
        Ok(controls) => {
            let patch = DestinationPatch {
                url: Some(f.url.clone()),
                platform: Some(if f.platform.is_empty() { "custom".to_owned() } else { f.platform.clone() }),
                events: Some(f.events.clone()),
                active: None,
                controls,
            };
            match state.webhooks.update(a.ws, &a.audit, a.id, patch).await {
                Ok(d) => return Ok(back(&state.pages, &detail_path(d.id), "Changes saved.")),
                Err(UpdateWebhookError::Invalid(v)) => v,
                Err(e) => return Err(page_error(e)),
            }
        }
        Err(v) => v,
    };
    let d = state.webhooks.get(a.ws, a.id).await.map_err(page_error)?;
    let mut view = DetailView {
        form: DestinationForm { active: d.active, ..f },
        errors: FormErrors::from_validation(invalid),
        ..DetailView::default()
    };
    load_log(&state, a.ws, &d, None, &mut view).await?;
    Ok(detail_page(&a.signed, &d, &view, StatusCode::UNPROCESSABLE_ENTITY))
}
