//! A channel's WhatsApp message templates (`GET /v1/channels/{channel_id}/templates`).

use domain::connectors::templates::TemplateRecord;
use utoipa::ToSchema;

/// A page of a channel's templates (a sync answers the whole catalogue, `next_cursor` null).
#[derive(Debug, serde::Serialize, ToSchema)]
pub struct TemplateList {
    /// The templates, by name and language.
    pub data: Vec<TemplateRecord>,
    /// Cursor of the next page; null on the last.
    pub next_cursor: Option<String>,
}
