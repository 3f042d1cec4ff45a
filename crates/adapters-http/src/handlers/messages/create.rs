//! `POST /v1/messages`

use actix_web::http::header::LOCATION;
use actix_web::{web, HttpRequest, HttpResponse};
use domain::messaging::{location, SendAs, SendInput};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::authentication::Authenticated;
use crate::dto::{MessageRecord, TemplateBody};
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

/// A message to send.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SendMessageBody {
    /// The channel to send through (must be `active`).
    #[schema(example = 1)]
    channel_id: i64,
    /// The text, 1 to 4096 characters. Required, except with `template`: left out (or blank), it
    /// is the template's body with its parameters filled in.
    #[serde(default)]
    #[schema(max_length = 4096, example = "Your order has shipped.")]
    content: Option<String>,
    /// Reply in this thread; its contact is the recipient.
    thread_id: Option<i64>,
    /// The recipient when there is no `thread_id`: an E.164 phone number for WhatsApp
    /// (`+14155550123`), the platform's user id for Messenger and Instagram.
    #[schema(max_length = 64, example = "+14155550123")]
    to: Option<String>,
    /// WhatsApp only: send this approved template (outside the 24-hour customer-service window only
    /// templates are delivered); `content` is kept as its preview (the filled-in body when left out).
    template: Option<TemplateBody>,
    /// API keys only: send on behalf of an active member (`user`) or active AI agent (`ai_agent`)
    /// of the workspace; without it, the key is the sender.
    sender: Option<SenderBody>,
    /// Messenger and Instagram only: `human_agent` lets a member's answer go out up to 7 days after
    /// the contact's latest message (sent with Meta's `HUMAN_AGENT` tag) instead of 24 hours.
    #[schema(example = "human_agent")]
    tag: Option<String>,
}

/// The member or AI agent a key sends for.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SenderBody {
    /// `user` or `ai_agent`.
    #[serde(rename = "type")]
    #[schema(example = "user")]
    kind: String,
    /// The user's or agent's id.
    id: i64,
}

/// Queues an outbound message. With an `Idempotency-Key`, retrying the same request returns the
/// first result (same status and body, header `Idempotent-Replayed: true`) instead of sending twice;
/// the same key with a different request is 409.
#[utoipa::path(
    post,
    operation_id = "send_message",
    path = "/v1/messages",
    tag = "messages",
    request_body = SendMessageBody,
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe: 1 to 255 visible ASCII characters, kept 24 hours")),
    responses(
        (status = 201, description = "The queued message", body = MessageRecord,
            headers(("Location" = String, description = "URL of the message"))),
        (status = 409, description = "The channel is not active, or the Idempotency-Key was used with another request", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid fields (`validation_failed`, naming `template.name`, `template.parameters`, `tag`, …); the recipient's service window is closed (`service_window_closed`, with `expires_at`, null when the contact never wrote); or the template is not approved (`template_not_approved`). Nothing was stored or sent", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create(
    caller: Authenticated,
    state: web::Data<AppState>,
    req: HttpRequest,
    StrictJson(body): StrictJson<SendMessageBody>,
) -> Result<HttpResponse, ApiError> {
    let key = match req.headers().get("idempotency-key") {
        Some(v) => Some(v.to_str().map_err(|_| ApiError::field("Idempotency-Key", "must be visible ASCII"))?),
        None => None,
    };
    let by = SendAs::of(caller.actor).ok_or_else(|| ApiError::Internal(anyhow::anyhow!("no sender on /v1")))?;
    let input = SendInput {
        channel_id: body.channel_id,
        content: body.content.unwrap_or_default(),
        thread_id: body.thread_id,
        to: body.to,
        template: body.template.map(Into::into),
        sender: body.sender.map(|s| (s.kind, s.id)),
        tag: body.tag,
    };
    let stored = state.messages.send(caller.workspace_id, input, by, key).await?;
    let mut res = HttpResponse::Created();
    res.insert_header((LOCATION, location(&stored.message)));
    if stored.replayed {
        res.insert_header(("Idempotent-Replayed", "true"));
    }
    Ok(res.json(MessageRecord::from(stored.message)))
}
