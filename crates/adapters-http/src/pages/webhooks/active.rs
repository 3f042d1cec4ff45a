//! `POST /settings/integrations/webhooks/{webhook_id}/active`: activate or deactivate.

use actix_web::{web, HttpResponse};
use domain::webhooks::DestinationPatch;

use super::{back, detail_path, page_error, DestinationAction};
use crate::pages::PageError;
use crate::state::AppState;

/// Sets the active flag (`active=true|false`). Deliveries held while inactive resume on activation.
///
/// # Errors
/// [`PageError::NotFound`], [`PageError::Csrf`].
pub async fn set_active(a: DestinationAction, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    let active = a.form.get("active") == Some("true");
    let patch = DestinationPatch { active: Some(active), ..DestinationPatch::default() };
    let d = state.webhooks.update(a.ws, &a.audit, a.id, patch).await.map_err(page_error)?;
    let message = if active {
        "Destination activated: events are delivered again."
    } else {
        "Destination deactivated: no events are sent to it."
    };
    Ok(back(&state.pages, &detail_path(d.id), message))
}
