//! `POST /v1/webhooks` and `POST /api/workspaces/{workspace_id}/webhooks`

use actix_web::{web, HttpRequest, HttpResponse};
use domain::webhooks::DestinationInput;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::audit_context::{Acting, WorkspaceCaller};
use crate::dto::WebhookRecord;
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

/// A new destination.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWebhookBody {
    /// Absolute `https` URL of at most 2048 characters, on a public address.
    #[schema(example = "https://hooks.example.com/wms")]
    url: String,
    /// Free label, 1 to 50 characters; default `custom`.
    #[schema(example = "n8n")]
    platform: Option<String>,
    /// Event types from the catalog, at least one.
    #[schema(example = json!(["thread.created", "thread.assigned"]))]
    events: Vec<String>,
    /// Default `true`.
    active: Option<bool>,
}

/// The created destination and its signing secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedWebhook {
    /// The destination.
    #[serde(flatten)]
    pub webhook: WebhookRecord,
    /// The signing secret; it can be revealed again with `GET /v1/webhooks/{webhook_id}/secret`.
    #[schema(example = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")]
    pub secret: String,
}

/// Creates a webhook destination. Unknown event names, a non-https URL or one on a private,
/// loopback or reserved address are refused with 422 naming the field.
#[utoipa::path(
    post,
    operation_id = "post_webhooks",
    path = "/v1/webhooks",
    tag = "webhooks",
    request_body = CreateWebhookBody,
    responses(
        (status = 201, description = "The destination and its secret", body = CreatedWebhook,
            headers(("Location" = String, description = "URL of the destination"))),
    )
)]
pub async fn create<C: WorkspaceCaller>(
    who: Acting<C>,
    req: HttpRequest,
    state: web::Data<AppState>,
    StrictJson(body): StrictJson<CreateWebhookBody>,
) -> Result<HttpResponse, ApiError> {
    let input = DestinationInput { url: body.url, platform: body.platform, events: body.events, active: body.active };
    let (webhook, secret) = state.webhooks.create(who.workspace, &who.audit, input).await?;
    // The list's path on either surface (`/v1/webhooks`, `/api/workspaces/{id}/webhooks`).
    let location = format!("{}/{}", req.path().trim_end_matches('/'), webhook.id);
    Ok(crate::handlers::created(
        location,
        CreatedWebhook { webhook: webhook.into(), secret: secret.expose().to_owned() },
    ))
}
