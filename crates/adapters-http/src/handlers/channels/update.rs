//! `PATCH /v1/channels/{channel_id}`

use actix_web::{web, HttpResponse};
use domain::channels::{ChannelChangeInput, ChannelId};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::dto::{ChannelRecord, ChannelStatus, CredentialsBody};
use crate::error::ApiError;
use crate::handlers::input::{present, ChangeInput, RequestBody};
use crate::state::AppState;

/// Fields to change; omitted fields keep their value.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateChannelBody {
    /// Name shown to the team, 1 to 100 characters.
    #[schema(min_length = 1, max_length = 100)]
    display_name: Option<String>,
    /// `active`, `pending` or `disconnected`.
    #[schema(value_type = Option<ChannelStatus>)]
    status: Option<String>,
    /// New platform credentials (replace the old ones whole; write-only).
    credentials: Option<CredentialsBody>,
    /// The team new threads of the channel go to (assigned by its policy), or null for none.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>)]
    default_team_id: Option<Option<i64>>,
}

/// Renames a channel, changes its status or sets its platform credentials. Emits `channel.updated`.
#[utoipa::path(
    patch,
    operation_id = "update_channel",
    path = "/v1/channels/{channel_id}",
    tag = "channels",
    params(("channel_id" = i64, Path, description = "Channel id")),
    request_body = UpdateChannelBody,
    responses(
        (status = 200, description = "The channel", body = ChannelRecord),
        (status = 409, description = "Another channel is connected to this platform account", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid fields, or credentials the platform does not confirm for their account (`credentials`)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 502, description = "The platform cannot be reached to confirm the credentials (`service_unavailable`); nothing is stored", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update(state: web::Data<AppState>, req: ChangeInput<UpdateChannelBody>) -> Result<HttpResponse, ApiError> {
    let channel = state.channels.update(req.workspace, &req.audit, ChannelId(req.id), req.input).await?;
    Ok(HttpResponse::Ok().json(ChannelRecord::from(channel)))
}

impl RequestBody for UpdateChannelBody {
    type Input = ChannelChangeInput;
    fn into_input(self) -> ChannelChangeInput {
        let Self { display_name, status, credentials, default_team_id } = self;
        ChannelChangeInput { display_name, status, credentials: credentials.map(Into::into), default_team_id }
    }
}
