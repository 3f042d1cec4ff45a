//! `PATCH /v1/webhooks/{webhook_id}` and its settings twin

use actix_web::{web, HttpResponse};
use std::collections::BTreeMap;

use domain::webhooks::controls::{DeliveryOrdering, EventFilter};
use domain::webhooks::{ControlsInput, DestinationId, DestinationPatch};
use serde::Deserialize;
use utoipa::ToSchema;

use super::WebhookPath;
use crate::audit_context::Acting;
use crate::dto::WebhookRecord;
use crate::error::ApiError;
use crate::handlers::input::present;
use crate::state::AppState;
use crate::strict::StrictJson;

/// The members to change; omitted (or null) members stay as they are.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateWebhookBody {
    /// New URL (same rules as on creation).
    url: Option<String>,
    /// New label.
    platform: Option<String>,
    /// New subscriptions, replacing the old ones.
    #[schema(min_items = 1)]
    events: Option<Vec<String>>,
    /// `false` pauses deliveries; `true` resumes them and clears a deactivation note.
    active: Option<bool>,
    /// Hard cap on deliveries per second, 1 to 1000; null removes it.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 1000)]
    rate_limit_per_second: Option<Option<i64>>,
    /// Hard cap on deliveries in flight at once, 1 to 100; null removes it.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 100)]
    max_in_flight: Option<Option<i64>>,
    /// Static headers, replacing the old ones (null or `{}`: none).
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Object>)]
    headers: Option<Option<BTreeMap<String, String>>>,
    /// New filter; null removes it.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<EventFilter>)]
    filter: Option<Option<EventFilter>>,
    /// `none` or `per_thread`.
    #[schema(value_type = Option<DeliveryOrdering>)]
    ordering: Option<String>,
}

/// Changes a destination. Reactivating it resumes the deliveries that were waiting; events that
/// happened while it was inactive are not sent.
#[utoipa::path(
    patch,
    operation_id = "patch_webhooks_webhook_id",
    path = "/v1/webhooks/{webhook_id}",
    tag = "webhooks",
    params(("webhook_id" = i64, Path, description = "Destination id")),
    request_body = UpdateWebhookBody,
    responses((status = 200, description = "The updated destination", body = WebhookRecord))
)]
pub async fn update(
    who: Acting,
    state: web::Data<AppState>,
    path: web::Path<WebhookPath>,
    StrictJson(body): StrictJson<UpdateWebhookBody>,
) -> Result<HttpResponse, ApiError> {
    let patch = DestinationPatch {
        url: body.url,
        platform: body.platform,
        events: body.events,
        active: body.active,
        controls: ControlsInput {
            rate_limit_per_second: body.rate_limit_per_second,
            max_in_flight: body.max_in_flight,
            headers: body.headers.map(Option::unwrap_or_default),
            filter: body.filter,
            ordering: body.ordering,
        },
    };
    let webhook = state.webhooks.update(who.workspace, &who.audit, DestinationId(path.webhook_id), patch).await?;
    Ok(HttpResponse::Ok().json(WebhookRecord::from(webhook)))
}
