//! The `sla` of the thread record (REST and the `thread.*` and `sla.breached` events).

use time::OffsetDateTime;

use super::tracking::ThreadSla;

/// A thread's SLA in its current cycle.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ThreadSlaRecord {
    /// The policy that applied at the cycle's start; null once that policy is deleted (its
    /// targets still run).
    pub policy_id: Option<i64>,
    /// When the first response is due (RFC 3339, UTC); null without that target.
    #[serde(with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub first_response_due_at: Option<OffsetDateTime>,
    /// When the awaited next response is due; null when no answer is awaited.
    #[serde(with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub next_response_due_at: Option<OffsetDateTime>,
    /// When the resolution is due; null without that target.
    #[serde(with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub resolution_due_at: Option<OffsetDateTime>,
    /// `active`, `hit` (every target met) or `missed` (some target missed).
    #[cfg_attr(feature = "openapi", schema(example = "active"))]
    pub status: String,
    /// The targets missed so far: `first_response`, `next_response`, `resolution`.
    #[cfg_attr(feature = "openapi", schema(example = json!(["first_response"])))]
    pub breaches: Vec<String>,
}

impl From<&ThreadSla> for ThreadSlaRecord {
    fn from(s: &ThreadSla) -> Self {
        Self {
            policy_id: s.policy_id,
            first_response_due_at: s.first_response_due_at,
            next_response_due_at: s.next_response_due_at,
            resolution_due_at: s.resolution_due_at,
            status: s.status().as_str().to_owned(),
            breaches: s.breaches.iter().map(|b| b.as_str().to_owned()).collect(),
        }
    }
}
