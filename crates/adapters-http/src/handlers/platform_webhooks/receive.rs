//! `POST /platform-webhooks/{platform}`: delivery statuses and inbound messages.

use actix_web::{web, HttpRequest, HttpResponse};
use domain::connectors::signature_valid;

use crate::error::ApiError;
use crate::state::AppState;

/// Verifies `X-Hub-Signature-256` with the app secret of the channel each entry is for, then
/// applies the entries. Bodies that are malformed, for another object, or for no known channel are
/// acknowledged with 200 and logged, so the platform does not disable the endpoint; a body whose
/// signature matches no channel is refused with 401. A database failure answers 503 so the
/// platform retries: nothing valid is lost.
///
/// # Errors
/// 401 `invalid_token` for a missing or wrong signature, 503 when storage fails.
pub async fn receive(
    path: web::Path<String>,
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let channel_type = super::platform(&path)?;
    let Some(signature) = req.headers().get("x-hub-signature-256").and_then(|v| v.to_str().ok()) else {
        return Err(ApiError::InvalidToken("X-Hub-Signature-256 is missing".into()));
    };
    let ok = || HttpResponse::Ok().content_type("text/plain; charset=utf-8").body("EVENT_RECEIVED");
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(&body) else {
        tracing::warn!(platform = %channel_type, bytes = body.len(), "platform callback is not JSON; acknowledged and ignored");
        return Ok(ok());
    };
    let entries = super::payload::parse(channel_type, &json);
    if entries.is_empty() {
        tracing::warn!(platform = %channel_type, object = %json["object"], "platform callback with nothing wms reads; acknowledged");
        return Ok(ok());
    }
    let (mut verified, mut refused) = (0usize, 0usize);
    for (account, events) in entries {
        let Some(channel) = state.callbacks.channel_for_account(channel_type, &account).await.map_err(unavailable)?
        else {
            tracing::warn!(platform = %channel_type, %account, "platform callback for an unknown account; acknowledged");
            continue;
        };
        if !signature_valid(state.cipher.as_ref(), &channel, &body, signature) {
            refused += 1;
            continue;
        }
        verified += 1;
        let applied = state.callbacks.apply(&channel, &events).await.map_err(unavailable)?;
        tracing::info!(platform = %channel_type, channel_id = channel.channel_id.0, statuses = applied.statuses, inbound = applied.inbound, "platform callback applied");
    }
    if refused > 0 && verified == 0 {
        return Err(ApiError::InvalidToken("X-Hub-Signature-256 does not match the channel's app secret".into()));
    }
    Ok(ok())
}

fn unavailable(e: domain::RepoError) -> ApiError {
    tracing::error!(error = format!("{:#}", e.0), "platform callback not stored");
    ApiError::ServiceUnavailable("cannot store the callback now; retry".into())
}
