//! `POST /platform-webhooks/{platform}`: delivery statuses and inbound messages.

use std::sync::Arc;

use actix_web::{web, HttpRequest, HttpResponse};
use domain::connectors::{CallbackError, ReceivedCallback};
use futures_util::StreamExt;

use crate::error::ApiError;
use crate::state::AppState;

/// Largest callback body (`docs/contract.md`, "Abuse limits"); Meta's batches stay far below it.
pub const MAX_CALLBACK_BYTES: usize = 256 * 1024;

/// Reads the body (at most 256 KiB, refused from `Content-Length` before reading when it says
/// more), then lets `domain::connectors::CallbackService` check the sender's address, the
/// signature against the app secrets of the accounts the body names, and apply the events of each
/// named account whose channel's app secret signed it. A wrong or missing signature is 401
/// whatever the body names, so the answer never tells which accounts are connected; an address
/// that sent more than 20 badly signed callbacks in a minute is 429. Validly signed bodies are
/// acknowledged with 200 (accounts whose channel's secret did not sign are logged and skipped),
/// so the platform does not disable the endpoint. A database failure answers 503 so the platform
/// retries: nothing valid is lost.
///
/// # Errors
/// 401 `invalid_token` for a missing or wrong signature, 413 `payload_too_large` for a body over
/// 256 KiB or naming more than 100 accounts, 429 `rate_limited` for an address over its budget,
/// 503 when storage fails.
pub async fn receive(
    path: web::Path<String>,
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let platform = super::platform(&path)?;
    let body = read_bounded(&req, payload).await?;
    let bytes = body.len();
    let signature = req.headers().get("x-hub-signature-256").and_then(|v| v.to_str().ok());
    let callback = ReceivedCallback { platform, body, signature, client: req.peer_addr().map(|a| a.ip()) };
    let report = state.callbacks.receive(callback).await.map_err(|e| match e {
        CallbackError::BadSignature => ApiError::InvalidToken(e.to_string()),
        CallbackError::Throttled { retry_after } => ApiError::RateLimited { retry_after },
        CallbackError::TooManyAccounts { .. } => ApiError::TooLarge(e.to_string()),
        CallbackError::Unknown(e) => unavailable(e),
    })?;
    if report.named == 0 {
        tracing::warn!(platform = %platform, bytes, "platform callback with nothing wms reads; acknowledged");
    }
    for account in &report.skipped {
        tracing::warn!(platform = %platform, %account, "platform callback for an account not connected with this app secret; acknowledged");
    }
    for c in &report.templates {
        tracing::info!(channel_id = c.channel_id.0, template = %c.template.name, status = c.template.status.as_str(), "template status updated");
    }
    for (channel_id, applied) in &report.applied {
        tracing::info!(platform = %platform, channel_id = channel_id.0, statuses = applied.statuses, inbound = applied.inbound, "platform callback applied");
    }
    Ok(HttpResponse::Ok().content_type("text/plain; charset=utf-8").body("EVENT_RECEIVED"))
}

/// The body, refused with 413 `payload_too_large` past [`MAX_CALLBACK_BYTES`] (by its declared
/// length before anything is read, or as soon as the bytes read pass the limit).
async fn read_bounded(req: &HttpRequest, mut payload: web::Payload) -> Result<Arc<[u8]>, ApiError> {
    let too_large = || ApiError::PayloadTooLarge { limit: MAX_CALLBACK_BYTES };
    let declared = req
        .headers()
        .get(actix_web::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_CALLBACK_BYTES) {
        return Err(too_large());
    }
    let mut body = Vec::with_capacity(declared.unwrap_or(0));
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| ApiError::BadRequest(format!("cannot read the body: {e}")))?;
        if body.len() + chunk.len() > MAX_CALLBACK_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.into())
}

fn unavailable(e: domain::RepoError) -> ApiError {
    tracing::error!(error = format!("{:#}", e.0), "platform callback not stored");
    ApiError::ServiceUnavailable("cannot store the callback now; retry".into())
}
