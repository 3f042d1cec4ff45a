//! `POST /v1/webhooks/{webhook_id}/replay` and its settings twin

use actix_web::{web, HttpResponse};
use domain::events::ReplayInput;
use domain::webhooks::DestinationId;
use serde::Deserialize;
use utoipa::ToSchema;

use super::WebhookPath;
use crate::audit_context::Acting;
use crate::dto::ReplayAnswer;
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

/// Which events to send again.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplayBody {
    /// Events that happened at or after this time (RFC 3339). Required.
    #[schema(example = "2026-11-23T08:00:00Z")]
    pub since: Option<String>,
    /// …and before this time (RFC 3339); now when absent.
    pub until: Option<String>,
    /// Only these types (of those the destination subscribes to); all of them when absent.
    #[schema(example = json!(["message.created"]))]
    pub event_types: Option<Vec<String>>,
}

/// Delivers again every event of the window, of a type the destination subscribes to, that it
/// has not received successfully — also events from while it was inactive — oldest first and
/// under the same `webhook-id`, within the destination's rate limit. An event already on its way
/// is not queued twice. Deliveries of an inactive destination wait until it is active again.
#[utoipa::path(
    post,
    operation_id = "post_webhooks_webhook_id_replay",
    path = "/v1/webhooks/{webhook_id}/replay",
    tag = "webhooks",
    params(("webhook_id" = i64, Path, description = "Destination id")),
    request_body = ReplayBody,
    responses((status = 202, description = "Queued", body = ReplayAnswer))
)]
pub async fn replay(
    who: Acting,
    state: web::Data<AppState>,
    path: web::Path<WebhookPath>,
    StrictJson(body): StrictJson<ReplayBody>,
) -> Result<HttpResponse, ApiError> {
    let input = ReplayInput { since: body.since, until: body.until, event_types: body.event_types };
    let queued = state.events.replay(who.workspace, &who.audit, DestinationId(path.webhook_id), &input).await?;
    Ok(HttpResponse::Accepted().json(ReplayAnswer { queued }))
}
