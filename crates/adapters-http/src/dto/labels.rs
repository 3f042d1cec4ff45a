//! The records of `/v1/labels`.

use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;

/// A label.
#[derive(Debug, Serialize, ToSchema)]
pub struct LabelRecord {
    /// Id.
    pub id: i64,
    /// Name, unique in the workspace ignoring case.
    #[schema(example = "vip")]
    pub name: String,
    /// Colour `#rrggbb`.
    #[schema(example = "#22c55e", pattern = "^#[0-9a-f]{6}$")]
    pub color: String,
    /// Creation time (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

impl From<domain::labels::Label> for LabelRecord {
    fn from(l: domain::labels::Label) -> Self {
        Self { id: l.id, name: l.name, color: l.color, created_at: l.created_at }
    }
}

/// A page of labels.
#[derive(Debug, ToSchema)]
pub struct LabelList {
    /// The labels, oldest first.
    pub data: Vec<LabelRecord>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}
