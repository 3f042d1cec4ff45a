//! `POST /settings/workspace/api-keys/{key_id}/delete` (forms cannot send `DELETE`)

use actix_web::{web, HttpResponse};
use domain::api_keys::DeleteApiKeyError;

use super::{KeyForm, PATH};
use crate::pages::session::see_other_with_flash;
use crate::pages::PageError;
use crate::state::AppState;

/// Deletes the key and its record.
///
/// # Errors
/// [`PageError::NotFound`] for another workspace's key; [`PageError::Csrf`].
pub async fn delete(state: web::Data<AppState>, KeyForm(form): KeyForm) -> Result<HttpResponse, PageError> {
    state.api_keys.delete(&form.caller, &form.audit, form.key).await.map_err(change_error)?;
    Ok(see_other_with_flash(&state.pages, PATH, "The API key was deleted."))
}

/// The page error of a deletion failure.
fn change_error(e: DeleteApiKeyError) -> PageError {
    match e {
        DeleteApiKeyError::Forbidden => PageError::Forbidden(e.to_string()),
        DeleteApiKeyError::NotFound(_) => PageError::NotFound(super::GONE.into()),
        DeleteApiKeyError::Unknown(e) => e.into(),
    }
}
