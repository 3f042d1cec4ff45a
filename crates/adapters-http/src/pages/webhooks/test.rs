//! `POST /settings/integrations/webhooks/{webhook_id}/test`

use actix_web::{web, HttpResponse};
use domain::webhooks::EventType;

use super::{action_workspace, back, destination, detail_path, page_error};
use crate::pages::session::{SessionForm, Signed};
use crate::pages::PageError;
use crate::state::AppState;

/// Sends a signed `webhook.test` event (or a sample of the chosen `event_type`) now and reports the endpoint's answer; the delivery
/// appears in the log.
///
/// # Errors
/// [`PageError::NotFound`], [`PageError::Csrf`].
pub async fn send(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64,)>,
    SessionForm(form): SessionForm,
) -> Result<HttpResponse, PageError> {
    let ws = action_workspace(&s)?;
    let audit = meta.member(s.member.user_id, s.member.role);
    let id = destination(path.0);
    let event = match form.get("event_type").filter(|t| !t.is_empty()) {
        None => EventType::WebhookTest,
        Some(t) => t.parse::<EventType>().map_err(|e| PageError::BadRequest(e.message))?,
    };
    let data = crate::event_catalog::sample_data(event, id, time::OffsetDateTime::now_utc());
    let delivery = state.webhooks.send_sample(ws, &audit, id, event, &data).await.map_err(page_error)?;
    let message = match delivery.attempts.last() {
        Some(a) => match (a.status_code, &a.error) {
            (Some(code), _) if (200..300).contains(&code) => {
                format!("Test event delivered: your endpoint answered HTTP {code}.")
            }
            (Some(code), _) => {
                format!("Test event sent, but your endpoint answered HTTP {code}. See the delivery log.")
            }
            (None, Some(e)) => format!("Test event could not be delivered: {e}"),
            (None, None) => "Test event sent.".to_owned(),
        },
        None => "Test event queued.".to_owned(),
    };
    Ok(back(&state.pages, &detail_path(id), &message))
}
