//! `POST /settings/integrations/webhooks/{webhook_id}/secret` (reveal) and `…/secret/rotate`.
//! Both are POSTs with the anti-forgery token: a secret is never shown by merely following a link,
//! and the page that shows it is not cached.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};

use super::detail::{form_of, load_log};
use super::view::{detail_page, DetailView};
use super::{action_workspace, destination, page_error};
use crate::pages::session::{SessionForm, Signed};
use crate::pages::PageError;
use crate::state::AppState;

async fn show(
    s: Signed,
    meta: &crate::audit_context::RequestMeta,
    state: &AppState,
    id: i64,
    rotate: bool,
) -> Result<HttpResponse, PageError> {
    let ws = action_workspace(&s)?;
    let audit = meta.member(s.member.user_id, s.member.role);
    let id = destination(id);
    let secret = if rotate {
        state.webhooks.rotate_secret(ws, &audit, id).await
    } else {
        state.webhooks.secret(ws, &audit, id).await
    }
    .map_err(page_error)?;
    let d = state.webhooks.get(ws, id).await.map_err(page_error)?;
    let mut v = DetailView {
        form: form_of(&d),
        secret: Some(secret.expose().to_owned()),
        rotated: rotate,
        ..DetailView::default()
    };
    load_log(state, ws, &d, None, &mut v).await?;
    Ok(detail_page(&s, &d, &v, StatusCode::OK))
}

/// Shows the current secret.
///
/// # Errors
/// [`PageError::NotFound`], [`PageError::Csrf`].
pub async fn reveal(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64,)>,
    _form: SessionForm,
) -> Result<HttpResponse, PageError> {
    show(s, &meta, &state, path.0, false).await
}

/// Replaces the secret (the old one signs for 24 more hours) and shows the new one.
///
/// # Errors
/// [`PageError::NotFound`], [`PageError::Csrf`].
pub async fn rotate(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64,)>,
    _form: SessionForm,
) -> Result<HttpResponse, PageError> {
    show(s, &meta, &state, path.0, true).await
}
