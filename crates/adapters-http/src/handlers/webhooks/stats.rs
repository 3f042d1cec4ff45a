//! `GET /v1/webhooks/{webhook_id}/stats` and its settings twin

use actix_web::{web, HttpResponse};
use domain::webhooks::stats::DestinationStats;
use domain::webhooks::DestinationId;
use domain::{FieldError, ValidationErrors};
use serde::Deserialize;
use utoipa::IntoParams;

use super::WebhookPath;
use crate::authentication::Authenticated;
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// The window of the figures.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct StatsQuery {
    /// RFC 3339 start of the window; default: 24 hours ago.
    #[param(example = "2026-11-26T00:00:00Z")]
    pub since: Option<String>,
}

/// The destination's delivery figures since `since`: successful and failed attempts, deliveries
/// waiting and given up, the success rate, attempt latency percentiles, the latest failure, and
/// the pace wms delivers to it at now (adaptive, within its caps).
#[utoipa::path(
    get,
    operation_id = "get_webhooks_webhook_id_stats",
    path = "/v1/webhooks/{webhook_id}/stats",
    tag = "webhooks",
    params(("webhook_id" = i64, Path, description = "Destination id"), StatsQuery),
    responses((status = 200, description = "The figures", body = DestinationStats))
)]
pub async fn stats(
    caller: Authenticated,
    state: web::Data<AppState>,
    path: web::Path<WebhookPath>,
    StrictQuery(q): StrictQuery<StatsQuery>,
) -> Result<HttpResponse, ApiError> {
    let since = match q.since.as_deref() {
        None => None,
        Some(raw) => Some(domain::common::instant::parse_rfc3339(raw).ok_or_else(|| {
            ApiError::Validation(ValidationErrors(vec![FieldError::new("since", domain::common::instant::EXPECTED)]))
        })?),
    };
    let stats = state.webhooks.stats(caller.workspace_id, DestinationId(path.webhook_id), since).await?;
    Ok(HttpResponse::Ok().json(stats))
}
