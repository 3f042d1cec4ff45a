//! `GET /v1/messages`

use actix_web::{web, HttpResponse};
use domain::channels::ChannelId;
use domain::common::page::PageRequest;
use domain::messaging::{MessageFilter, ThreadId};
use domain::{FieldError, ValidationErrors};
use serde::Deserialize;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;
use utoipa::IntoParams;

use crate::authentication::V1Caller;
use crate::dto::{DirectionDto, MessageList, MessageRecord, MessageStatusDto};
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// Query of the message listing.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListMessagesQuery {
    /// Only messages of this channel.
    channel_id: Option<i64>,
    /// Only messages of this thread.
    thread_id: Option<i64>,
    /// Only messages with this status.
    status: Option<MessageStatusDto>,
    /// Only messages in this direction.
    direction: Option<DirectionDto>,
    /// Only messages created at or after this time (RFC 3339).
    #[param(format = DateTime)]
    since: Option<String>,
    /// Only messages created before this time (RFC 3339).
    #[param(format = DateTime)]
    until: Option<String>,
    /// Page size, 1 to 100.
    #[param(minimum = 1, maximum = 100, default = 25)]
    limit: Option<i64>,
    /// `next_cursor` of the previous page of the same listing: a cursor read with other filters
    /// is refused (422 naming `cursor`).
    cursor: Option<String>,
}

fn time_param(errors: &mut Vec<FieldError>, field: &str, raw: Option<&str>) -> Option<OffsetDateTime> {
    let raw = raw?;
    match OffsetDateTime::parse(raw, &Rfc3339) {
        Ok(t) => Some(t),
        Err(_) => {
            errors.push(FieldError::new(field, "must be an RFC 3339 time such as 2026-11-20T12:00:00Z"));
            None
        }
    }
}

/// Lists messages newest first: by id, descending, which is the order wms recorded them in.
/// Pagination is by cursor (the last id): stable while new messages arrive, and
/// as fast on the hundredth page as on the first.
#[utoipa::path(
    get,
    operation_id = "list_messages",
    path = "/v1/messages",
    tag = "messages",
    params(ListMessagesQuery),
    responses((status = 200, description = "A page of messages", body = MessageList))
)]
pub async fn list(
    caller: V1Caller,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<ListMessagesQuery>,
) -> Result<HttpResponse, ApiError> {
    let mut errors = Vec::new();
    PageRequest::new(q.limit, None).map_err(|e| errors.extend(e)).ok();
    let since = time_param(&mut errors, "since", q.since.as_deref());
    let until = time_param(&mut errors, "until", q.until.as_deref());
    let filter = MessageFilter {
        channel_id: q.channel_id.map(ChannelId),
        thread_id: q.thread_id.map(ThreadId),
        status: q.status.map(Into::into),
        direction: q.direction.map(Into::into),
        since,
        until,
    };
    // The cursor is bound to the filter set; read once the rest is valid.
    let page = errors
        .is_empty()
        .then(|| PageRequest::for_filters(q.limit, q.cursor.as_deref(), filter.cursor_key().as_str()))
        .and_then(|p| p.map_err(|e| errors.extend(e)).ok());
    let (Some(page), true) = (page, errors.is_empty()) else {
        return Err(ApiError::Validation(ValidationErrors(errors)));
    };
    let page = state.messages.list(caller.workspace_id, filter, page).await?;
    Ok(crate::handlers::listed(page.map(MessageRecord::from)))
}
