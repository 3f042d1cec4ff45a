//! `POST /settings/integrations/webhooks/{webhook_id}/delete` (after the confirmation dialog)

use actix_web::{web, HttpResponse};

use super::{back, page_error, DestinationAction, PATH};
use crate::pages::PageError;
use crate::state::AppState;

/// Deletes the destination and its delivery log.
///
/// # Errors
/// [`PageError::NotFound`], [`PageError::Csrf`].
pub async fn delete(a: DestinationAction, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    let d = state.webhooks.get(a.ws, a.id).await.map_err(page_error)?;
    state.webhooks.delete(a.ws, &a.audit, a.id).await.map_err(page_error)?;
    Ok(back(&state.pages, PATH, &format!("The destination {} was deleted.", d.url)))
}
