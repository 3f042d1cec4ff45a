//! The records of `/v1/sla-policies`.

use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;

/// An SLA policy: targets for a conversation's cycle (`docs/product/sla.md`).
#[derive(Debug, Serialize, ToSchema)]
pub struct SlaPolicyRecord {
    /// Id; at a cycle's start the first matching policy by id applies.
    pub id: i64,
    /// Name.
    #[schema(example = "Gold customers")]
    pub name: String,
    /// Cycle start → first response by a member or AI agent, in seconds; null: not measured.
    #[schema(example = 3600)]
    pub first_response_seconds: Option<i64>,
    /// A contact's message after a response → the next response, in seconds; null: not measured.
    #[schema(example = 7200)]
    pub next_response_seconds: Option<i64>,
    /// Cycle start → `resolved`, in seconds; null: not measured.
    #[schema(example = 86400)]
    pub resolution_seconds: Option<i64>,
    /// Whether only the workspace's business hours count.
    pub business_hours: bool,
    /// The channels it applies to; empty: every channel.
    pub channel_ids: Vec<i64>,
    /// The labels it applies to (a thread carrying any of them); empty: every thread.
    #[schema(example = json!(["vip"]))]
    pub labels: Vec<String>,
    /// Creation time (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

impl From<domain::sla::SlaPolicy> for SlaPolicyRecord {
    fn from(p: domain::sla::SlaPolicy) -> Self {
        Self {
            id: p.id,
            name: p.name,
            first_response_seconds: p.targets.first_response,
            next_response_seconds: p.targets.next_response,
            resolution_seconds: p.targets.resolution,
            business_hours: p.business_hours,
            channel_ids: p.channel_ids,
            labels: p.labels,
            created_at: p.created_at,
        }
    }
}

/// A page of SLA policies.
#[derive(Debug, ToSchema)]
pub struct SlaPolicyList {
    /// The policies, by id.
    pub data: Vec<SlaPolicyRecord>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}
