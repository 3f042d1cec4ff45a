//! `GET /v1/channels`

use actix_web::{web, HttpResponse};
use domain::channels::ChannelFilter;
use domain::common::page::PageRequest;
use domain::ValidationErrors;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::authentication::Authenticated;
use crate::dto::{ChannelList, ChannelRecord, ChannelStatus, ChannelType};
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// Query of the channel listing.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListChannelsQuery {
    /// Only channels of this platform.
    channel_type: Option<ChannelType>,
    /// Only channels with this status.
    status: Option<ChannelStatus>,
    /// Page size, 1 to 100.
    #[param(minimum = 1, maximum = 100, default = 25)]
    limit: Option<i64>,
    /// `next_cursor` of the previous page of the same listing: a cursor read with other filters
    /// is refused (422 naming `cursor`).
    cursor: Option<String>,
}

/// Lists the workspace's channels, oldest first.
#[utoipa::path(
    get,
    operation_id = "list_channels",
    path = "/v1/channels",
    tag = "channels",
    params(ListChannelsQuery),
    responses((status = 200, description = "A page of channels", body = ChannelList))
)]
pub async fn list(
    caller: Authenticated,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<ListChannelsQuery>,
) -> Result<HttpResponse, ApiError> {
    let filter = ChannelFilter { channel_type: q.channel_type, status: q.status };
    // The cursor is bound to the filter set.
    let page = PageRequest::for_filters(q.limit, q.cursor.as_deref(), filter.cursor_key().as_str())
        .map_err(|e| ApiError::Validation(ValidationErrors(e)))?;
    let page = state.channels.list(caller.workspace_id, filter, page).await?;
    Ok(crate::handlers::listed(page.map(ChannelRecord::from)))
}
