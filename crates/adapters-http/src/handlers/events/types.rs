//! `GET /v1/event-types`

use actix_web::HttpResponse;
use domain::webhooks::EventType;
use serde::Serialize;
use utoipa::{OpenApi, ToSchema};

use crate::auth::V1Caller;
use crate::event_catalog::{inline_refs, payload_schema};

/// One event type.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventTypeRecord {
    /// What destinations subscribe to (`message.created`).
    pub name: String,
    /// What happened, and what `data` is.
    pub description: String,
    /// JSON Schema (2020-12) of the whole body `{"type","timestamp","workspace_id","data"}`,
    /// self-contained.
    #[schema(value_type = Object)]
    pub schema: serde_json::Value,
}

/// The catalogue.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventTypeList {
    /// Every type a destination may subscribe to.
    pub data: Vec<EventTypeRecord>,
}

/// Every event type a webhook destination may subscribe to (and the feed may be filtered by),
/// with its payload schema. The same schemas are in this document's top-level `webhooks`.
#[utoipa::path(
    get,
    operation_id = "list_event_types",
    path = "/v1/event-types",
    tag = "events",
    responses((status = 200, description = "The event catalogue", body = EventTypeList))
)]
pub async fn list(_caller: V1Caller) -> HttpResponse {
    let doc = serde_json::to_value(crate::openapi::ApiDoc::openapi()).unwrap_or_default();
    let components = doc.pointer("/components/schemas").cloned().unwrap_or_default();
    let data = EventType::CATALOG
        .into_iter()
        .map(|e| EventTypeRecord {
            name: e.as_str().to_owned(),
            description: e.description().to_owned(),
            schema: inline_refs(&payload_schema(e), &components),
        })
        .collect();
    HttpResponse::Ok().json(EventTypeList { data })
}
