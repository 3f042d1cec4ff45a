//! `POST /logout`: ends the session on the server and in the browser.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};

use super::session::{removal, SessionForm};
use super::PageError;
use crate::session_cookie::SESSION_COOKIE;
use crate::state::AppState;

/// Revokes the session (so a copied cookie stops working too) and deletes the cookie.
///
/// # Errors
/// [`PageError::Csrf`] without the session's token (a forged sign-out is refused as well).
pub async fn logout(
    req: HttpRequest,
    state: web::Data<AppState>,
    _form: SessionForm,
) -> Result<HttpResponse, PageError> {
    if let Some(c) = req.cookie(SESSION_COOKIE) {
        state.pages.sessions.sign_out(c.value()).await?;
    }
    Ok(HttpResponse::SeeOther()
        .insert_header((header::LOCATION, "/login"))
        .cookie(removal(&state.pages, SESSION_COOKIE))
        .finish())
}
