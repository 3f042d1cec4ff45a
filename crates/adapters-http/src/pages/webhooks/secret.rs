//! `POST /settings/integrations/webhooks/{webhook_id}/secret` (reveal) and `…/secret/rotate`.
//! Both are POSTs with the anti-forgery token: a secret is never shown by merely following a link,
//! and the page that shows it is not cached.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::webhooks::signing::SigningSecret;

use super::detail::{form_of, load_log};
use super::view::{detail_page, DetailView};
use super::{page_error, DestinationAction};
use crate::pages::PageError;
use crate::state::AppState;

/// Shows the current secret.
///
/// # Errors
/// [`PageError::NotFound`], [`PageError::Csrf`].
pub async fn reveal(a: DestinationAction, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    let secret = state.webhooks.secret(a.ws, &a.audit, a.id).await.map_err(page_error)?;
    show(a, &state, &secret, false).await
}

/// Replaces the secret (the old one signs for 24 more hours) and shows the new one.
///
/// # Errors
/// [`PageError::NotFound`], [`PageError::Csrf`].
pub async fn rotate(a: DestinationAction, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    let secret = state.webhooks.rotate_secret(a.ws, &a.audit, a.id).await.map_err(page_error)?;
    show(a, &state, &secret, true).await
}

/// The destination's page with `secret` shown.
async fn show(
    a: DestinationAction,
    state: &AppState,
    secret: &SigningSecret,
    rotated: bool,
) -> Result<HttpResponse, PageError> {
    let d = state.webhooks.get(a.ws, a.id).await.map_err(page_error)?;
    let mut v =
        DetailView { form: form_of(&d), secret: Some(secret.expose().to_owned()), rotated, ..DetailView::default() };
    load_log(state, a.ws, &d, None, &mut v).await?;
    Ok(detail_page(&a.signed, &d, &v, StatusCode::OK))
}
