//! `POST /settings/workspace/api-keys/{key_id}/delete` (forms cannot send `DELETE`)

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use domain::api_keys::{ApiKeyId, DeleteApiKeyError};

use super::PATH;
use crate::pages::session::{flash_cookie, SessionForm, Signed};
use crate::pages::PageError;
use crate::state::AppState;

/// Deletes the key and its record.
///
/// # Errors
/// [`PageError::NotFound`] for another workspace's key; [`PageError::Csrf`].
pub async fn delete(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64,)>,
    _form: SessionForm,
) -> Result<HttpResponse, PageError> {
    let audit = meta.member(s.member.user_id, s.member.role);
    state.api_keys.delete(&s.member, &audit, ApiKeyId(path.0)).await.map_err(change_error)?;
    Ok(HttpResponse::SeeOther()
        .insert_header((header::LOCATION, PATH))
        .cookie(flash_cookie(&state.pages, "The API key was deleted."))
        .finish())
}

/// The page error of a deletion failure.
fn change_error(e: DeleteApiKeyError) -> PageError {
    match e {
        DeleteApiKeyError::Forbidden => PageError::Forbidden(e.to_string()),
        DeleteApiKeyError::NotFound(_) => PageError::NotFound(super::GONE.into()),
        DeleteApiKeyError::Unknown(e) => e.into(),
    }
}
