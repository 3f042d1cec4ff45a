//! `POST /settings/workspace/api-keys/{key_id}/revoke`

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use domain::api_keys::{ApiKeyId, RevokeApiKeyError};

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

/// The page error of a revocation failure.
fn change_error(e: RevokeApiKeyError) -> PageError {
    match e {
        RevokeApiKeyError::Forbidden => PageError::Forbidden(e.to_string()),
        RevokeApiKeyError::NotFound(_) => PageError::NotFound(super::GONE.into()),
        RevokeApiKeyError::Unknown(e) => e.into(),
    }
}
