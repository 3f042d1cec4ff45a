//! `POST /v1/webhooks` and `POST /api/workspaces/{workspace_id}/webhooks`

use actix_web::http::header::LOCATION;
use actix_web::{web, HttpRequest, HttpResponse};
use domain::webhooks::DestinationInput;
use domain::workspace::WorkspaceId;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::authentication::{Member, V1Caller};
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
    path = "/v1/webhooks",
    tag = "webhooks",
    request_body = CreateWebhookBody,
    responses(
        (status = 201, description = "The destination and its secret", body = CreatedWebhook,
            headers(("Location" = String, description = "URL of the destination"))),
    )
)]
pub async fn v1(
    caller: V1Caller,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    StrictJson(body): StrictJson<CreateWebhookBody>,
) -> Result<HttpResponse, ApiError> {
    run(caller.workspace_id, &meta.context(caller.principal.actor()), &state, body, "/v1/webhooks").await
}

/// The settings API's twin of [`v1`].
pub async fn settings(
    member: Member,
    meta: crate::audit_context::RequestMeta,
    req: HttpRequest,
    state: web::Data<AppState>,
    StrictJson(body): StrictJson<CreateWebhookBody>,
) -> Result<HttpResponse, ApiError> {
    run(member.workspace_id, &meta.member(member.user_id, member.role), &state, body, req.path()).await
}

async fn run(
    ws: WorkspaceId,
    audit: &domain::audit::AuditContext,
    state: &AppState,
    body: CreateWebhookBody,
    base: &str,
) -> Result<HttpResponse, ApiError> {
    let input = DestinationInput { url: body.url, platform: body.platform, events: body.events, active: body.active };
    let (webhook, secret) = state.webhooks.create(ws, audit, input).await?;
    Ok(HttpResponse::Created()
        .insert_header((LOCATION, format!("{}/{}", base.trim_end_matches('/'), webhook.id)))
        .json(CreatedWebhook { webhook: webhook.into(), secret: secret.expose().to_owned() }))
}
