//! `GET /v1/webhooks/{webhook_id}/secret` and its settings twin

use actix_web::http::header::CACHE_CONTROL;
use actix_web::{web, HttpResponse};
use domain::webhooks::signing::SigningSecret;
use domain::webhooks::DestinationId;

use super::WebhookPath;
use crate::audit_context::Acting;
use crate::dto::SecretRecord;
use crate::error::ApiError;
use crate::state::AppState;

/// Reveals the destination's signing secret (wms keeps it, encrypted, because it signs with it).
#[utoipa::path(
    get,
    operation_id = "get_webhooks_webhook_id_secret",
    path = "/v1/webhooks/{webhook_id}/secret",
    tag = "webhooks",
    params(("webhook_id" = i64, Path, description = "Destination id")),
    responses(
        (status = 200, description = "The current secret", body = SecretRecord),
        (status = 409, description = "The stored secret cannot be opened with the configured keys (`conflict`): \
         rotate it (`POST /v1/webhooks/{webhook_id}/secret/rotate`) or configure the key it was sealed with",
         body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn reveal(
    who: Acting,
    state: web::Data<AppState>,
    path: web::Path<WebhookPath>,
) -> Result<HttpResponse, ApiError> {
    let secret = state.webhooks.secret(who.workspace, &who.audit, DestinationId(path.webhook_id)).await?;
    Ok(answer(&secret))
}

/// The secret, never to be cached.
pub(super) fn answer(secret: &SigningSecret) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((CACHE_CONTROL, "no-store"))
        .json(SecretRecord { secret: secret.expose().to_owned() })
}
