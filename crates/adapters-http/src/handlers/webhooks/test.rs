//! `POST /v1/webhooks/{webhook_id}/test` and its settings twin

use actix_web::{web, HttpResponse};
use domain::webhooks::{DestinationId, EventType};
use domain::{FieldError, ValidationErrors};
use serde::Deserialize;
use utoipa::ToSchema;

use super::WebhookPath;
use crate::audit_context::Acting;
use crate::dto::DeliveryRecord;
use crate::error::ApiError;
use crate::extract::RawBody;
use crate::state::AppState;

/// Which sample to send; the body may be omitted.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TestBody {
    /// An event type of `GET /v1/event-types`, or `webhook.test` (the default).
    #[schema(example = "message.created")]
    pub event_type: Option<String>,
}

/// The optional body: nothing (or whitespace) means `webhook.test`; anything else is read as
/// strictly as every other body.
fn body(raw: &[u8]) -> Result<TestBody, ApiError> {
    if raw.iter().all(u8::is_ascii_whitespace) {
        return Ok(TestBody::default());
    }
    crate::strict::parse_json(raw)
}

/// Sends a signed sample event to the destination now (also when it is inactive) and answers
/// with the delivery and the attempt, including the endpoint's status: `webhook.test` by
/// default, or a realistic sample of `event_type` with the schema of that type's `data`. A
/// sample is not retried, not in the events feed and not replayed. The destination's own
/// `max_in_flight` and `rate_limit_per_second` hold for it (429 with `Retry-After` while full:
/// nothing is recorded).
#[utoipa::path(
    post,
    operation_id = "post_webhooks_webhook_id_test",
    path = "/v1/webhooks/{webhook_id}/test",
    tag = "webhooks",
    params(("webhook_id" = i64, Path, description = "Destination id")),
    request_body(content = Option<TestBody>, description = "Optional"),
    responses(
        (status = 200, description = "The test delivery and its attempt", body = DeliveryRecord),
        (status = 429, description = "The destination's own `max_in_flight` or `rate_limit_per_second` is full; `Retry-After` says when to try again", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn send(
    who: Acting,
    state: web::Data<AppState>,
    path: web::Path<WebhookPath>,
    RawBody(raw): RawBody,
) -> Result<HttpResponse, ApiError> {
    // Another workspace's destination is not found, whatever the body (the body was ignored
    // before it became optional, so existing callers may send anything).
    state.webhooks.get(who.workspace, DestinationId(path.webhook_id)).await?;
    let body = body(&raw)?;
    let event = match body.event_type.as_deref() {
        None => EventType::WebhookTest,
        Some(raw) => raw.parse::<EventType>().map_err(|_| {
            ApiError::Validation(ValidationErrors(vec![FieldError::new(
                "event_type",
                format!("`{raw}` is not an event type (see GET /v1/event-types)"),
            )]))
        })?,
    };
    let id = DestinationId(path.webhook_id);
    let now = time::OffsetDateTime::now_utc();
    let data = crate::event_catalog::sample_data(event, id, now);
    let delivery = state.webhooks.send_sample(who.workspace, &who.audit, id, event, &data).await?;
    Ok(HttpResponse::Ok().json(DeliveryRecord::from(delivery)))
}
