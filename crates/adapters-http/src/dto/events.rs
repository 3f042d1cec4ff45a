//! The records of `/v1/events` (the feed) and `/v1/event-types` (the catalogue).

use serde::Serialize;
use utoipa::ToSchema;

/// One event of the feed: the body its deliveries sent, with its id in front.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventRecord {
    /// `msg_…`: the `webhook-id` header of the event's deliveries.
    #[schema(example = "msg_2b7f0c8e6a9d4c35b1e04f7a9c2d8e61")]
    pub id: String,
    /// The event type (`GET /v1/event-types`).
    #[serde(rename = "type")]
    #[schema(example = "message.created")]
    pub kind: String,
    /// When it happened (RFC 3339, UTC, milliseconds).
    #[schema(format = DateTime)]
    pub timestamp: String,
    /// The workspace.
    pub workspace_id: i64,
    /// The REST record of the resource as it was then; its schema per type is in the document's
    /// `webhooks` and in `GET /v1/event-types`.
    pub data: serde_json::Value,
}

/// A page of the feed.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventList {
    /// Events, oldest first; empty at the end of the feed.
    pub data: Vec<EventRecord>,
    /// Pass as `cursor` to continue; at the end of the feed, the cursor to poll with later.
    /// Never null.
    pub next_cursor: String,
}

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
