//! The records of `/v1/ai-agents`.

use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;

/// An AI agent.
#[derive(Debug, Serialize, ToSchema)]
pub struct AiAgentRecord {
    /// Id.
    pub id: i64,
    /// Name.
    #[schema(example = "Order assistant")]
    pub name: String,
    /// `active` (can take threads) or `draft`.
    #[schema(example = "active")]
    pub status: String,
    /// Creation time (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

impl From<domain::ai_agents::AiAgent> for AiAgentRecord {
    fn from(a: domain::ai_agents::AiAgent) -> Self {
        Self { id: a.id, name: a.name, status: a.status, created_at: a.created_at }
    }
}

/// A page of AI agents.
#[derive(Debug, ToSchema)]
pub struct AiAgentList {
    /// The agents, oldest first.
    pub data: Vec<AiAgentRecord>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}
