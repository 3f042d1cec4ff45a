//! `POST /settings/workspace/api-keys/{key_id}/revoke`

use actix_web::{web, HttpResponse};
use domain::api_keys::RevokeApiKeyError;

use super::{KeyForm, PATH};
use crate::pages::session::see_other_with_flash;
use crate::pages::PageError;
use crate::state::AppState;

/// Revokes the key: it stops working at once and stays listed as revoked.
///
/// # Errors
/// [`PageError::NotFound`] for another workspace's key; [`PageError::Csrf`].
pub async fn revoke(state: web::Data<AppState>, KeyForm(form): KeyForm) -> Result<HttpResponse, PageError> {
    let key = state.api_keys.revoke(&form.caller, &form.audit, form.key).await.map_err(change_error)?;
    let message = format!("The key “{}” ({}) was revoked.", key.name, key.masked_key);
    Ok(see_other_with_flash(&state.pages, PATH, &message))
}

/// The page error of a revocation failure.
fn change_error(e: RevokeApiKeyError) -> PageError {
    match e {
        RevokeApiKeyError::Forbidden => PageError::Forbidden(e.to_string()),
        RevokeApiKeyError::NotFound(_) => PageError::NotFound(super::GONE.into()),
        RevokeApiKeyError::Unknown(e) => e.into(),
    }
}
