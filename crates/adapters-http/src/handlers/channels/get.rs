//! `GET /v1/channels/{channel_id}`

use actix_web::{web, HttpResponse};
use domain::channels::ChannelId;

use crate::authentication::V1Caller;
use crate::dto::ChannelRecord;
use crate::error::ApiError;
use crate::state::AppState;

/// One channel of the workspace.
#[utoipa::path(
    get,
    operation_id = "get_channel",
    path = "/v1/channels/{channel_id}",
    tag = "channels",
    params(("channel_id" = i64, Path, description = "Channel id")),
    responses((status = 200, description = "The channel", body = ChannelRecord))
)]
pub async fn get(caller: V1Caller, state: web::Data<AppState>, path: web::Path<i64>) -> Result<HttpResponse, ApiError> {
    let channel = state.channels.get(caller.workspace_id, ChannelId(path.into_inner())).await?;
    Ok(HttpResponse::Ok().json(ChannelRecord::from(channel)))
}
