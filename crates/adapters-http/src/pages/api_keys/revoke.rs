//! `POST /settings/workspace/api-keys/{key_id}/revoke`

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use domain::api_keys::{ApiKeyId, ChangeApiKeyError};

use super::PATH;
use crate::pages::session::{flash_cookie, SessionForm, Signed};
use crate::pages::PageError;
use crate::state::AppState;

/// Revokes the key: it stops working at once and stays listed as revoked.
///
/// # Errors
/// [`PageError::NotFound`] for another workspace's key; [`PageError::Csrf`].
pub async fn revoke(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64,)>,
    _form: SessionForm,
) -> Result<HttpResponse, PageError> {
    let audit = meta.member(s.member.user_id, s.member.role);
    let key = state.api_keys.revoke(&s.member, &audit, ApiKeyId(path.0)).await.map_err(change_error)?;
    Ok(HttpResponse::SeeOther()
        .insert_header((header::LOCATION, PATH))
        .cookie(flash_cookie(&state.pages, &format!("The key “{}” ({}) was revoked.", key.name, key.masked_key)))
        .finish())
}

/// The page error of a revoke or delete failure.
pub fn change_error(e: ChangeApiKeyError) -> PageError {
    match e {
        ChangeApiKeyError::Forbidden => PageError::Forbidden(e.to_string()),
        ChangeApiKeyError::NotFound(_) => PageError::NotFound("This API key does not exist (any more).".into()),
        ChangeApiKeyError::Unknown(e) => e.into(),
    }
}
