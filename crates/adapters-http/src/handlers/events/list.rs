//! `GET /v1/events`

use actix_web::{web, HttpResponse};
use domain::events::FeedInput;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::authentication::Authenticated;
use crate::dto::EventList;
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// Query of the feed.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct FeedQueryParams {
    /// Page size, 1 to 100.
    #[param(minimum = 1, maximum = 100, default = 25)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page (a cursor belongs to the filters it was read with).
    pub cursor: Option<String>,
    /// Only this event type.
    #[serde(rename = "type")]
    #[param(rename = "type", example = "message.created")]
    pub event_type: Option<String>,
    /// Only events at or after this time (RFC 3339).
    #[param(example = "2026-11-24T08:00:00Z")]
    pub since: Option<String>,
}

/// The workspace's events, oldest first after the cursor, kept for the delivery log's retention
/// (`webhooks.retention_days`, 30 days by default) whether or not a destination received them.
/// At the end of the feed `data` is empty and `next_cursor` is where to resume later.
#[utoipa::path(
    get,
    operation_id = "list_events",
    path = "/v1/events",
    tag = "events",
    params(FeedQueryParams),
    responses((status = 200, description = "A page of events", body = EventList))
)]
pub async fn list(
    caller: Authenticated,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<FeedQueryParams>,
) -> Result<HttpResponse, ApiError> {
    let input = FeedInput { limit: q.limit, cursor: q.cursor, event_type: q.event_type, since: q.since };
    let page = state.events.feed(caller.workspace_id, &input).await?;
    // The records are the stored bodies, byte for byte: written out, never parsed again.
    let mut body = String::with_capacity(64 + page.events.iter().map(|e| e.payload.len() + 48).sum::<usize>());
    body.push_str("{\"data\":[");
    for (i, e) in page.events.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(&e.record_json());
    }
    body.push_str("],\"next_cursor\":");
    body.push_str(&serde_json::Value::from(page.next.cursor()).to_string());
    body.push('}');
    Ok(HttpResponse::Ok().content_type("application/json").body(body))
}
