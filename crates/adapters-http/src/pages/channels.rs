//! `/settings/workspace/channels`: the workspace's channels, the service-window rule that holds
//! back free text, and each WhatsApp channel's message templates with their review status.

use actix_web::{web, HttpResponse};
use domain::channels::{ChannelFilter, ChannelType};
use domain::common::page::PageRequest;
use domain::connectors::template_sync::ListTemplatesError;
use maud::html;
use serde::Deserialize;

use super::layout::page;
use super::session::Signed;
use super::PageError;
use crate::state::AppState;

/// The page's path.
pub const PATH: &str = "/settings/workspace/channels";

/// `?cursor=`: the page of channels after the one before.
#[derive(Debug, Default, Deserialize)]
pub struct ChannelsQuery {
    cursor: Option<String>,
}

/// The channels and their templates, 100 channels a page.
///
/// # Errors
/// Infrastructure failures; a bad cursor starts from the first page.
pub async fn show(
    s: Signed,
    state: web::Data<AppState>,
    q: web::Query<ChannelsQuery>,
) -> Result<HttpResponse, PageError> {
    let ws = s.caller.workspace_id;
    let request = PageRequest::new(Some(100), q.cursor.as_deref())
        .or_else(|_| PageRequest::new(Some(100), None))
        .map_err(|_| PageError::Internal(anyhow::anyhow!("a page of 100 channels")))?;
    let channels = state.channels.list(ws, ChannelFilter::default(), request).await?;
    let mut sections = Vec::new();
    for c in &channels.data {
        let templates = if c.channel_type == ChannelType::Whatsapp {
            match state.templates.list(ws, c.id).await {
                Ok(t) => t,
                Err(ListTemplatesError::NotFound(_)) => Vec::new(),
                Err(ListTemplatesError::Unknown(e)) => return Err(e.into()),
            }
        } else {
            Vec::new()
        };
        sections.push((c, templates));
    }
    let body = html! {
        h1 { "Channels" }
        section.card {
            h2 { "When free text can be sent" }
            p { "Meta delivers a free-form message only within " strong { "24 hours" } " of the customer's latest message (the time the platform gives that message). wms applies the rule before anything is stored: outside the window a send answers " code { "422 service_window_closed" } " with " code { "expires_at" } ", and nothing is queued." }
            ul {
                li { "WhatsApp: outside the window, send an approved template. A template that is unknown, not approved or given the wrong number of parameters is refused (" code { "template.name" } ", " code { "template_not_approved" } ", " code { "template.parameters" } ")." }
                li { "Messenger and Instagram: a member's answer with " code { "\"tag\": \"human_agent\"" } " may go out up to 7 days after the customer's latest message." }
            }
        }
        @if sections.is_empty() {
            p { "No channels yet." }
        }
        @for (c, templates) in &sections {
            section.card {
                h2 { (c.display_name) " " small { (c.channel_type.as_str()) " · " (c.identifier) " · " (c.status.as_str()) } }
                @if c.channel_type == ChannelType::Whatsapp {
                    @if templates.is_empty() {
                        p { "No templates known. Give the channel its WhatsApp Business Account id (" code { "waba_id" } ") in its credentials; wms then syncs its templates from Meta." }
                    } @else {
                        table {
                            thead { tr { th { "Template" } th { "Language" } th { "Category" } th { "Status" } th { "Parameters" } th { "Quality" } } }
                            tbody {
                                @for t in templates {
                                    tr data-template=(t.name) {
                                        td { code { (t.name) } }
                                        td { (t.language) }
                                        td { (t.category) }
                                        td.status { (t.status.as_str()) @if let Some(r) = &t.rejected_reason { " (" (r) ")" } }
                                        td { (t.parameters) }
                                        td { (t.quality.as_deref().unwrap_or("—")) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if let Some(c) = &channels.next_cursor {
            p { a href={ (PATH) "?cursor=" (c) } { "More channels →" } }
        }
    };
    Ok(HttpResponse::Ok().content_type("text/html; charset=utf-8").body(page("Channels", PATH, &s, body).into_string()))
}
