//! The records of the webhook destinations' API (`/v1/webhooks`, and the settings API's twin). The
//! destination itself is also event `data`, so it is the domain's [`WebhookRecord`].

use domain::webhooks::{Delivery, DeliveryAttempt, WebhookRecord};
use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;

/// A page of destinations.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookList {
    /// Destinations, oldest first.
    pub data: Vec<WebhookRecord>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

/// The signing secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct SecretRecord {
    /// `whsec_` + base64 of the HMAC key.
    #[schema(example = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")]
    pub secret: String,
}

/// One attempt of a delivery.
#[derive(Debug, Serialize, ToSchema)]
pub struct AttemptRecord {
    /// 1 for the first attempt.
    pub attempt_number: i32,
    /// `scheduled` (first attempt or automatic retry), `manual` or `test`.
    pub trigger: String,
    /// When it started.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub attempted_at: OffsetDateTime,
    /// The endpoint's HTTP status; null when it did not answer.
    pub status_code: Option<u16>,
    /// The transport error (timeout, connection, TLS, DNS, refused address); null when it answered.
    pub error: Option<String>,
    /// How long it took, in milliseconds.
    pub duration_ms: i64,
    /// The start of the endpoint's answer (wms reads at most 64 KiB and keeps 4 KiB).
    pub response_excerpt: String,
    /// When the next attempt was planned after this one; null when none was.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub next_attempt_at: Option<OffsetDateTime>,
}

impl From<DeliveryAttempt> for AttemptRecord {
    fn from(a: DeliveryAttempt) -> Self {
        Self {
            attempt_number: a.attempt_number,
            trigger: a.trigger.as_str().to_owned(),
            attempted_at: a.attempted_at,
            status_code: a.status_code,
            error: a.error,
            duration_ms: a.duration_ms,
            response_excerpt: a.response_excerpt,
            next_attempt_at: a.next_attempt_at,
        }
    }
}

/// One event sent to one destination, with every attempt.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryRecord {
    /// Its id (for manual retry).
    pub id: i64,
    /// The destination.
    pub webhook_id: i64,
    /// The `webhook-id` header, the same on every attempt.
    #[schema(example = "msg_2b7c4f1e9a0d4c55b0e1f3a7c9d8e6f4")]
    pub message_id: String,
    /// The event type.
    #[schema(example = "message.created")]
    pub event_type: String,
    /// `pending`, `sending`, `paused` (destination inactive), `succeeded` or `failed`.
    pub status: String,
    /// Attempts so far.
    pub attempt_count: i32,
    /// The next planned attempt; null when none is planned.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub next_attempt_at: Option<OffsetDateTime>,
    /// When the event was recorded.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// The payload as sent: `{"type", "timestamp", "workspace_id", "data"}`.
    #[schema(value_type = Object)]
    pub payload: serde_json::Value,
    /// Every attempt, oldest first.
    pub attempts: Vec<AttemptRecord>,
}

impl From<Delivery> for DeliveryRecord {
    fn from(d: Delivery) -> Self {
        Self {
            id: d.id.0,
            webhook_id: d.destination_id.0,
            message_id: d.message_id,
            event_type: d.event_type,
            status: d.status.as_str().to_owned(),
            attempt_count: d.attempt_count,
            next_attempt_at: d.next_attempt_at,
            created_at: d.created_at,
            payload: serde_json::from_str(&d.payload).unwrap_or(serde_json::Value::String(d.payload)),
            attempts: d.attempts.into_iter().map(Into::into).collect(),
        }
    }
}

/// A page of deliveries.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryList {
    /// Deliveries, newest first.
    pub data: Vec<DeliveryRecord>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
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

/// How many events were queued.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReplayAnswer {
    /// Events queued for delivery, oldest first.
    pub queued: u64,
}
