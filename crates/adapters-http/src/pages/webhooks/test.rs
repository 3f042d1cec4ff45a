//! `POST /settings/integrations/webhooks/{webhook_id}/test`

use actix_web::{web, HttpResponse};
use domain::webhooks::{EventType, SendTestError};

use super::{back, detail_path, page_error, DestinationAction};
use crate::pages::PageError;
use crate::state::AppState;

/// Sends a signed `webhook.test` event (or a sample of the chosen `event_type`) now and reports the endpoint's answer; the delivery
/// appears in the log.
///
/// # Errors
/// [`PageError::NotFound`], [`PageError::Csrf`]. A full cap of the destination's own is said in
/// the message.
pub async fn send(a: DestinationAction, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    let event = match a.form.get("event_type").filter(|t| !t.is_empty()) {
        None => EventType::WebhookTest,
        Some(t) => t.parse::<EventType>().map_err(|e| PageError::BadRequest(e.message))?,
    };
    let data = crate::event_catalog::sample_data(event, a.id, time::OffsetDateTime::now_utc());
    let delivery = match state.webhooks.send_sample(a.ws, &a.audit, a.id, event, &data).await {
        Ok(d) => d,
        Err(e @ SendTestError::CapReached { .. }) => {
            return Ok(back(&state.pages, &detail_path(a.id), &format!("Test event not sent: {e}.")))
        }
        Err(e) => return Err(page_error(e)),
    };
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
    Ok(back(&state.pages, &detail_path(a.id), &message))
}
