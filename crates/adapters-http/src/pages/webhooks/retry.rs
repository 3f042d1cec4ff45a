//! `POST /settings/integrations/webhooks/{webhook_id}/deliveries/{delivery_id}/retry`

use actix_web::{web, HttpResponse};
use domain::webhooks::{DeliveryId, RedeliverError};

use super::{back, detail_path, page_error, DestinationAction};
use crate::pages::PageError;
use crate::state::AppState;

/// Delivers the event again now, with the same `webhook-id`.
///
/// # Errors
/// [`PageError::NotFound`], [`PageError::Csrf`].
pub async fn retry(
    a: DestinationAction,
    state: web::Data<AppState>,
    path: web::Path<(i64, i64)>,
) -> Result<HttpResponse, PageError> {
    let delivery = DeliveryId(path.1);
    let location = format!("{}#deliveries", detail_path(a.id));
    let message = match state.webhooks.redeliver(a.ws, &a.audit, a.id, delivery).await {
        Ok(d) => match d.attempts.last().and_then(|a| a.status_code) {
            Some(code) => format!("Delivery {} sent again: HTTP {code}.", delivery.0),
            None => format!("Delivery {} sent again; see its status below.", delivery.0),
        },
        Err(RedeliverError::InProgress) => "That delivery is being sent right now; try again in a moment.".to_owned(),
        Err(e @ RedeliverError::CapReached { .. }) => format!("Delivery {} not sent: {e}.", delivery.0),
        Err(e) => return Err(page_error(e)),
    };
    Ok(back(&state.pages, &location, &message))
}
