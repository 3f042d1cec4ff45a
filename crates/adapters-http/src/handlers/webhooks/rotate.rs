//! `POST /v1/webhooks/{webhook_id}/secret/rotate` and its settings twin

use actix_web::{web, HttpResponse};
use domain::webhooks::DestinationId;

use super::WebhookPath;
use crate::audit_context::Acting;
use crate::dto::SecretRecord;
use crate::error::ApiError;
use crate::state::AppState;

/// Replaces the signing secret. For 24 hours the old secret keeps signing beside the new one
/// (two `v1,` signatures in `webhook-signature`), so receivers can switch at their own pace.
#[utoipa::path(
    post,
    operation_id = "post_webhooks_webhook_id_secret_rotate",
    path = "/v1/webhooks/{webhook_id}/secret/rotate",
    tag = "webhooks",
    params(("webhook_id" = i64, Path, description = "Destination id")),
    responses((status = 200, description = "The new secret", body = SecretRecord))
)]
pub async fn rotate(
    who: Acting,
    state: web::Data<AppState>,
    path: web::Path<WebhookPath>,
) -> Result<HttpResponse, ApiError> {
    let secret = state.webhooks.rotate_secret(who.workspace, &who.audit, DestinationId(path.webhook_id)).await?;
    Ok(super::secret::answer(&secret))
}
