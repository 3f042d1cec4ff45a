//! `POST /v1/webhooks` and `POST /api/workspaces/{workspace_id}/webhooks`

use actix_web::{web, HttpRequest, HttpResponse};
use std::collections::BTreeMap;

use domain::webhooks::controls::{DeliveryOrdering, EventFilter};
use domain::webhooks::{ControlsInput, DestinationInput};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::audit_context::Acting;
use crate::dto::CreatedWebhook;
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
    #[schema(example = json!(["thread.created", "thread.assigned"]), min_items = 1)]
    events: Vec<String>,
    /// Default `true`.
    active: Option<bool>,
    /// Hard cap on deliveries per second, 1 to 1000; null: wms's adaptive pace alone.
    #[schema(example = 50, minimum = 1, maximum = 1000)]
    rate_limit_per_second: Option<i64>,
    /// Hard cap on deliveries in flight at once, 1 to 100; null: wms's adaptive pace alone.
    #[schema(example = 10, minimum = 1, maximum = 100)]
    max_in_flight: Option<i64>,
    /// Up to 10 static headers sent with each delivery; `webhook-*`, `content-type`,
    /// `content-length` and `host` are wms's own and refused.
    #[schema(example = json!({"x-api-key": "k_123"}))]
    headers: Option<BTreeMap<String, String>>,
    /// Only events matching each non-empty list; null: every event of the subscribed types.
    filter: Option<EventFilter>,
    /// `none` (default) or `per_thread`.
    #[schema(value_type = Option<DeliveryOrdering>)]
    ordering: Option<String>,
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
pub async fn create(
    who: Acting,
    req: HttpRequest,
    state: web::Data<AppState>,
    StrictJson(body): StrictJson<CreateWebhookBody>,
) -> Result<HttpResponse, ApiError> {
    let input = DestinationInput {
        url: body.url,
        platform: body.platform,
        events: body.events,
        active: body.active,
        controls: ControlsInput {
            rate_limit_per_second: Some(body.rate_limit_per_second),
            max_in_flight: Some(body.max_in_flight),
            headers: body.headers,
            filter: Some(body.filter),
            ordering: body.ordering,
        },
    };
    let (webhook, secret) = state.webhooks.create(who.workspace, &who.audit, input).await?;
    // The list's path on either surface (`/v1/webhooks`, `/api/workspaces/{id}/webhooks`).
    let location = format!("{}/{}", req.path().trim_end_matches('/'), webhook.id);
    Ok(crate::handlers::created_with_secret(
        location,
        CreatedWebhook { webhook: webhook.into(), secret: secret.expose().to_owned() },
    ))
}
