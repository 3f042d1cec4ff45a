//! `GET /v1/channels/{channel_id}`

use actix_web::{web, HttpResponse};
use domain::channels::ChannelId;

use crate::dto::ChannelRecord;
use crate::error::ApiError;
use crate::handlers::input::Lookup;
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
pub async fn get(state: web::Data<AppState>, req: Lookup) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(ChannelRecord::from(state.channels.get(req.workspace, ChannelId(req.id)).await?)))
}
