//! `GET /v1/event-types`

use actix_web::HttpResponse;
use domain::webhooks::EventType;
use utoipa::OpenApi;

use crate::authentication::Authenticated;
use crate::dto::{EventTypeList, EventTypeRecord};
use crate::event_catalog::{inline_refs, payload_schema};

/// Every event type a webhook destination may subscribe to (and the feed may be filtered by),
/// with its payload schema. The same schemas are in this document's top-level `webhooks`.
#[utoipa::path(
    get,
    operation_id = "list_event_types",
    path = "/v1/event-types",
    tag = "events",
    responses((status = 200, description = "The event catalogue", body = EventTypeList))
)]
pub async fn list(_caller: Authenticated) -> HttpResponse {
    let doc = serde_json::to_value(crate::openapi::ApiDoc::openapi()).unwrap_or_default();
    let components = doc.pointer("/components/schemas").cloned().unwrap_or_default();
    let data = EventType::CATALOG
        .iter()
        .copied()
        .map(|e| EventTypeRecord {
            name: e.as_str().to_owned(),
            description: e.description().to_owned(),
            schema: inline_refs(&payload_schema(e), &components),
        })
        .collect();
    HttpResponse::Ok().json(EventTypeList { data })
}
