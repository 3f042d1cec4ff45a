//! `POST /settings/integrations/webhooks/{webhook_id}/active`: activate or deactivate.

use actix_web::{web, HttpResponse};
use domain::webhooks::DestinationPatch;

use super::{action_workspace, back, destination, detail_path, page_error};
use crate::pages::session::{SessionForm, Signed};
use crate::pages::PageError;
use crate::state::AppState;

/// Sets the active flag (`active=true|false`). Deliveries held while inactive resume on activation.
///
/// # Errors
/// [`PageError::NotFound`], [`PageError::Csrf`].
pub async fn set_active(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64,)>,
    SessionForm(form): SessionForm,
) -> Result<HttpResponse, PageError> {
    let ws = action_workspace(&s)?;
    let audit = meta.member(s.member.user_id, s.member.role);
    let active = form.get("active") == Some("true");
    let patch = DestinationPatch { active: Some(active), ..DestinationPatch::default() };
    let d = state.webhooks.update(ws, &audit, destination(path.0), patch).await.map_err(page_error)?;
    let message = if active {
        "Destination activated: events are delivered again."
    } else {
        "Destination deactivated: no events are sent to it."
    };
    Ok(back(&state.pages, &detail_path(d.id), message))
}
