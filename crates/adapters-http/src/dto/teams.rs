//! The records of `/v1/teams`.

use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;

/// A team.
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamRecord {
    /// Id.
    pub id: i64,
    /// Name, unique in the workspace.
    #[schema(example = "Tier 2")]
    pub name: String,
    /// The user ids of its members, ascending.
    pub member_ids: Vec<i64>,
    /// How it hands out new threads.
    pub assignment: AssignmentRecord,
    /// Creation time (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

impl From<domain::teams::Team> for TeamRecord {
    fn from(t: domain::teams::Team) -> Self {
        Self {
            id: t.id,
            name: t.name,
            member_ids: t.member_ids,
            assignment: AssignmentRecord { mode: t.assignment.mode.as_str(), capacity: t.assignment.capacity },
            created_at: t.created_at,
        }
    }
}

/// A team's assignment policy.
#[derive(Debug, Serialize, ToSchema)]
pub struct AssignmentRecord {
    /// `manual` (threads stay with the team), `round_robin` (its online members in turn) or
    /// `balanced` (the online member with the fewest open and pending threads).
    #[schema(example = "balanced")]
    pub mode: &'static str,
    /// The most open + pending threads automatic assignment gives one member; null: no limit.
    #[schema(example = 5, minimum = 1)]
    pub capacity: Option<i32>,
}

/// A page of teams.
#[derive(Debug, ToSchema)]
pub struct TeamList {
    /// The teams, oldest first.
    pub data: Vec<TeamRecord>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}
