//! `POST /secret-scanning/github`

use actix_web::{web, HttpRequest, HttpResponse};
use domain::secret_scanning::{AlertSignature, ReceiveAlertError};

use crate::dto::LeakVerdict;
use crate::error::ApiError;
use crate::state::AppState;

/// The largest alert body read: 1,000 tokens with their URLs fit well within it.
pub const MAX_ALERT_BYTES: usize = 1024 * 1024;

/// The body, refused with a problem as soon as it passes [`MAX_ALERT_BYTES`] (an anonymous
/// caller cannot make the server hold more).
async fn read_limited(mut payload: web::Payload) -> Result<web::BytesMut, ApiError> {
    use futures_util::StreamExt;
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| ApiError::BadRequest(format!("cannot read the body: {e}")))?;
        if body.len() + chunk.len() > MAX_ALERT_BYTES {
            return Err(ApiError::PayloadTooLarge { limit: MAX_ALERT_BYTES });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Takes an alert signed by GitHub: revokes every live key and login token in it and labels each
/// token. The signature is checked over the raw body before anything in it is read.
///
/// # Errors
/// 401 `unauthenticated` without the signature headers, 401 `invalid_token` for a signature no
/// published key made (nothing changes), 413 `payload_too_large` over 1 MiB or 1,000 tokens, 422
/// `validation_failed` for a body that is not a JSON array of tokens, 503 when GitHub's keys or
/// the database cannot be reached (GitHub retries).
pub async fn receive(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let signature = AlertSignature {
        key_identifier: header("github-public-key-identifier"),
        signature: header("github-public-key-signature"),
    };
    // Unsigned: refused before a byte of the body is read, whatever its size.
    if !signature.is_present() {
        return Err(ApiError::Unauthenticated);
    }
    let body = read_limited(payload).await?;
    let verdicts = state.secret_scanning.receive(signature, &body).await.map_err(|e| match e {
        ReceiveAlertError::Unsigned => ApiError::Unauthenticated,
        ReceiveAlertError::BadSignature => ApiError::InvalidToken(e.to_string()),
        ReceiveAlertError::Invalid(v) => ApiError::Validation(v),
        ReceiveAlertError::TooMany { .. } => ApiError::TooLarge(e.to_string()),
        ReceiveAlertError::KeysUnavailable(k) => {
            tracing::error!(error = %k, "secret-scanning alert refused: GitHub's keys are unavailable");
            ApiError::ServiceUnavailable("cannot verify the alert's signature now; retry".into())
        }
        ReceiveAlertError::Unknown(e) => e.into(),
    })?;
    let revoked = verdicts.iter().filter(|v| v.label == domain::secret_scanning::LeakLabel::TruePositive).count();
    tracing::info!(tokens = verdicts.len(), true_positives = revoked, "secret-scanning alert taken");
    let answer: Vec<LeakVerdict> = verdicts
        .into_iter()
        .map(|v| LeakVerdict { token_raw: v.token_raw, token_type: v.token_type, label: v.label.as_str() })
        .collect();
    // The answer repeats the tokens GitHub sent: no cache may keep it.
    Ok(HttpResponse::Ok().insert_header(("Cache-Control", "no-store")).json(answer))
}
