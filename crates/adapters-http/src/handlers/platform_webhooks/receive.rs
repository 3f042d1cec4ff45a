//! `POST /platform-webhooks/{platform}`: delivery statuses and inbound messages.

use actix_web::{web, HttpRequest, HttpResponse};
use domain::connectors::template_sync::TemplateCallbackError;
use domain::connectors::CallbackError;

use crate::error::ApiError;
use crate::state::AppState;

/// Verifies `X-Hub-Signature-256` before anything else (`domain::connectors::callbacks`), then
/// applies the entries of each named account whose channel's app secret signed the body. A wrong
/// or missing signature is 401 whatever the body names, so the answer never tells which accounts
/// are connected. Validly signed bodies that are malformed, for another object, or for no known
/// channel are acknowledged with 200 and logged, so the platform does not disable the endpoint.
/// A database failure answers 503 so the platform retries: nothing valid is lost.
///
/// # Errors
/// 401 `invalid_token` for a missing or wrong signature, 413 `payload_too_large` for more than
/// 100 accounts, 503 when storage fails.
pub async fn receive(
    path: web::Path<String>,
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let channel_type = super::platform(&path)?;
    let signature = req.headers().get("x-hub-signature-256").and_then(|v| v.to_str().ok());
    // Parsing is bounded by the 1 MiB body limit and touches no database.
    let json = serde_json::from_slice::<serde_json::Value>(&body).ok();
    let entries = json.as_ref().map(|j| super::payload::parse(channel_type, j)).unwrap_or_default();
    // WhatsApp template status changes name WhatsApp Business Accounts, not phone numbers: they
    // are checked against the app secrets of the channels holding those WABAs.
    let template_updates = match (channel_type, &json) {
        (domain::channels::ChannelType::Whatsapp, Some(j)) => super::template_payload::template_updates(j),
        _ => Vec::new(),
    };
    if !template_updates.is_empty() {
        let changed =
            state.templates.receive_status_updates(&body, signature, template_updates).await.map_err(|e| match e {
                TemplateCallbackError::BadSignature => ApiError::InvalidToken(e.to_string()),
                TemplateCallbackError::Unknown(e) => unavailable(e),
            })?;
        for c in &changed {
            tracing::info!(channel_id = c.channel_id.0, template = %c.template.name, status = c.template.status.as_str(), "template status updated");
        }
        if entries.is_empty() {
            return Ok(HttpResponse::Ok().content_type("text/plain; charset=utf-8").body("EVENT_RECEIVED"));
        }
    }
    let named = entries.len();
    let report = state.callbacks.receive(channel_type, &body, signature, entries).await.map_err(|e| match e {
        CallbackError::BadSignature => ApiError::InvalidToken(e.to_string()),
        CallbackError::TooManyAccounts { .. } => ApiError::TooLarge(e.to_string()),
        CallbackError::Unknown(e) => unavailable(e),
    })?;
    match &json {
        None => {
            tracing::warn!(platform = %channel_type, bytes = body.len(), "platform callback is not JSON; acknowledged and ignored")
        }
        Some(j) if named == 0 => {
            tracing::warn!(platform = %channel_type, object = %j["object"], "platform callback with nothing wms reads; acknowledged");
        }
        Some(_) => {}
    }
    for account in &report.skipped {
        tracing::warn!(platform = %channel_type, %account, "platform callback for an account not connected with this app secret; acknowledged");
    }
    for (channel_id, applied) in &report.applied {
        tracing::info!(platform = %channel_type, channel_id = channel_id.0, statuses = applied.statuses, inbound = applied.inbound, "platform callback applied");
    }
    Ok(HttpResponse::Ok().content_type("text/plain; charset=utf-8").body("EVENT_RECEIVED"))
}

fn unavailable(e: domain::RepoError) -> ApiError {
    tracing::error!(error = format!("{:#}", e.0), "platform callback not stored");
    ApiError::ServiceUnavailable("cannot store the callback now; retry".into())
}
