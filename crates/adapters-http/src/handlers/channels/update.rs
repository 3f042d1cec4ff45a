//! `PATCH /v1/channels/{channel_id}`

use actix_web::{web, HttpResponse};
use domain::channels::{validate_channel_change, ChannelChangeInput, ChannelId};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::authentication::V1Caller;
use crate::dto::{ChannelRecord, ChannelStatusDto, CredentialsBody};
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

/// Fields to change; omitted fields keep their value.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateChannelBody {
    /// Name shown to the team, 1 to 100 characters.
    #[schema(min_length = 1, max_length = 100)]
    display_name: Option<String>,
    /// `active`, `pending` or `disconnected`.
    #[schema(value_type = Option<ChannelStatusDto>)]
    status: Option<String>,
    /// New platform credentials (replace the old ones whole; write-only).
    credentials: Option<CredentialsBody>,
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
pub async fn update(
    caller: V1Caller,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<i64>,
    StrictJson(body): StrictJson<UpdateChannelBody>,
) -> Result<HttpResponse, ApiError> {
    let id = ChannelId(path.into_inner());
    let channel = state
        .channels
        .find(caller.workspace_id, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("channel {id} not found")))?;
    let input = ChannelChangeInput {
        display_name: body.display_name,
        status: body.status,
        credentials: body.credentials.map(Into::into),
    };
    let credentials = input.credentials.clone();
    let change = validate_channel_change(caller.workspace_id, id, channel.channel_type, input, state.cipher.as_ref())?;
    // New credentials bind only once the platform vouches for the token (nothing changes otherwise).
    if let Some(c) = &credentials {
        state.account_proof.prove(channel.channel_type, c).await?;
    }
    let audit = meta.context(caller.principal.actor());
    let entries = domain::channels::channel_change_entries(caller.workspace_id, &audit, id, &change);
    let channel = state.channels.update(caller.workspace_id, id, &change, &entries).await?;
    Ok(HttpResponse::Ok().json(ChannelRecord::from(channel)))
}
