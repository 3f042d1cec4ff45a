//! `GET /v1/messages`

use actix_web::{web, HttpResponse};
use domain::channels::ChannelId;
use domain::messaging::{MessageFilter, ThreadId};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::authentication::Authenticated;
use crate::dto::{Direction, MessageList, MessageRecord, MessageStatus};
use crate::error::ApiError;
use crate::handlers::query::QueryProblems;
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
    status: Option<MessageStatus>,
    /// Only messages in this direction.
    direction: Option<Direction>,
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
    caller: Authenticated,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<ListMessagesQuery>,
) -> Result<HttpResponse, ApiError> {
    let mut problems = QueryProblems::with_limit(q.limit);
    let since = problems.time("since", q.since.as_deref());
    let until = problems.time("until", q.until.as_deref());
    let filter = MessageFilter {
        channel_id: q.channel_id.map(ChannelId),
        thread_id: q.thread_id.map(ThreadId),
        status: q.status,
        direction: q.direction,
        since,
        until,
    };
    let (filter, page) = problems.page(q.limit, q.cursor.as_deref(), Some(filter), MessageFilter::cursor_key)?;
    let page = state.messages.list(caller.workspace_id, filter, page).await?;
    Ok(crate::handlers::listed(page.map(MessageRecord::from)))
}
