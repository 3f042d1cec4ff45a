//! `POST /settings/integrations/webhooks/{webhook_id}/deliveries/{delivery_id}/retry`

use actix_web::{web, HttpResponse};
use domain::webhooks::{DeliveryId, WebhookError};

use super::{action_workspace, back, destination, detail_path, page_error};
use crate::pages::session::{SessionForm, Signed};
use crate::pages::PageError;
use crate::state::AppState;

/// Delivers the event again now, with the same `webhook-id`.
///
/// # Errors
/// [`PageError::NotFound`], [`PageError::Csrf`].
pub async fn retry(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64, i64)>,
    _form: SessionForm,
) -> Result<HttpResponse, PageError> {
    let ws = action_workspace(&s)?;
    let audit = meta.member(s.member.user_id, s.member.role);
    let (id, delivery) = (destination(path.0), DeliveryId(path.1));
    let location = format!("{}#deliveries", detail_path(id));
    let message = match state.webhooks.redeliver(ws, &audit, id, delivery).await {
        Ok(d) => match d.attempts.last().and_then(|a| a.status_code) {
            Some(code) => format!("Delivery {} sent again: HTTP {code}.", delivery.0),
            None => format!("Delivery {} sent again; see its status below.", delivery.0),
        },
        Err(WebhookError::InProgress) => "That delivery is being sent right now; try again in a moment.".to_owned(),
        Err(e) => return Err(page_error(e)),
    };
    Ok(back(&state.pages, &location, &message))
}
