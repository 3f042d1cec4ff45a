//! `POST /settings/integrations/webhooks/{webhook_id}/delete` (after the confirmation dialog)

use actix_web::{web, HttpResponse};

use super::{action_workspace, back, destination, page_error, PATH};
use crate::pages::session::{SessionForm, Signed};
use crate::pages::PageError;
use crate::state::AppState;

/// Deletes the destination and its delivery log.
///
/// # Errors
/// [`PageError::NotFound`], [`PageError::Csrf`].
pub async fn delete(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64,)>,
    _form: SessionForm,
) -> Result<HttpResponse, PageError> {
    let ws = action_workspace(&s)?;
    let audit = meta.member(s.member.user_id, s.member.role);
    let id = destination(path.0);
    let d = state.webhooks.get(ws, id).await.map_err(page_error)?;
    state.webhooks.delete(ws, &audit, id).await.map_err(page_error)?;
    Ok(back(&state.pages, PATH, &format!("The destination {} was deleted.", d.url)))
}
