//! `POST /settings/integrations/webhooks`

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::webhooks::{CreateWebhookError, DestinationInput};

use super::list::all;
use super::view::list_page;
use super::{action_workspace, back, detail_path, page_error, DestinationForm, FormErrors};
use crate::pages::session::{SessionForm, Signed};
use crate::pages::PageError;
use crate::state::AppState;

/// Adds a destination, then opens its page (where the secret can be revealed); on invalid input
/// the form comes back with the errors beside the fields.
///
/// # Errors
/// [`PageError::Forbidden`] for agents and below `growth`; [`PageError::Csrf`].
pub async fn create(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    SessionForm(form): SessionForm,
) -> Result<HttpResponse, PageError> {
    let ws = action_workspace(&s)?;
    let audit = s.audit(&meta);
    let f = DestinationForm::read(&form);
    let input = DestinationInput {
        url: f.url.clone(),
        platform: (!f.platform.is_empty()).then(|| f.platform.clone()),
        events: f.events.clone(),
        active: Some(f.active),
        controls: Default::default(),
    };
    match state.webhooks.create(ws, &audit, input).await {
        Ok((d, _secret)) => Ok(back(
            &state.pages,
            &detail_path(d.id),
            "Destination added. Reveal its signing secret below and send a test event to check your endpoint.",
        )),
        Err(CreateWebhookError::Invalid(v)) => {
            let errors = FormErrors::from_validation(v);
            let list = all(&state, ws).await?;
            Ok(list_page(&s, Some(&list), &f, &errors, StatusCode::UNPROCESSABLE_ENTITY))
        }
        Err(e) => Err(page_error(e)),
    }
}
