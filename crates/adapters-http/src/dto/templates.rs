//! A channel's WhatsApp message templates (`GET /v1/channels/{channel_id}/templates`).

use domain::connectors::templates::TemplateRecord;
use utoipa::ToSchema;

/// The templates of a channel (all of them: a WhatsApp Business Account holds a few hundred at most).
#[derive(Debug, serde::Serialize, ToSchema)]
pub struct TemplateList {
    /// The templates, by name and language.
    pub data: Vec<TemplateRecord>,
    /// Always null: the list is whole.
    pub next_cursor: Option<String>,
}
