//! `POST /v1/channels`

use actix_web::{web, HttpResponse};
use domain::channels::ChannelInput;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::dto::{ChannelRecord, ChannelStatus, ChannelType, CredentialsBody};
use crate::error::ApiError;
use crate::handlers::created;
use crate::handlers::input::{NewInput, RequestBody};
use crate::state::AppState;

/// A new channel.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateChannelBody {
    /// `whatsapp`, `messenger` or `instagram`. (Parsed as text so that every invalid field of a
    /// request is reported together.)
    #[schema(value_type = ChannelType, example = "whatsapp")]
    channel_type: String,
    /// Name shown to the team, 1 to 100 characters.
    #[schema(min_length = 1, max_length = 100, example = "Support (US)")]
    display_name: String,
    /// WhatsApp: the phone number in E.164 (`+14155550101`); Messenger/Instagram: the page or account id.
    #[schema(min_length = 1, max_length = 64, example = "+14155550101")]
    identifier: String,
    /// `active` (default), `pending` or `disconnected`.
    #[schema(value_type = Option<ChannelStatus>, example = "active")]
    status: Option<String>,
    /// Platform credentials for sending and receiving (write-only, stored encrypted).
    credentials: Option<CredentialsBody>,
    /// The team the channel's new threads go to (a team of the workspace); without it, none.
    #[schema(example = 4)]
    default_team_id: Option<i64>,
}

/// Creates a channel. The identifier must be unique per platform in the workspace.
#[utoipa::path(
    post,
    operation_id = "create_channel",
    path = "/v1/channels",
    tag = "channels",
    request_body = CreateChannelBody,
    responses(
        (status = 201, description = "The channel", body = ChannelRecord,
            headers(("Location" = String, description = "URL of the channel"))),
        (status = 409, description = "A channel of this type with this identifier exists", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid fields, or credentials the platform does not confirm for their account (`credentials`)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 502, description = "The platform cannot be reached to confirm the credentials (`service_unavailable`); nothing is stored", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create(state: web::Data<AppState>, req: NewInput<CreateChannelBody>) -> Result<HttpResponse, ApiError> {
    let channel = state.channels.create(req.workspace, &req.audit, req.input).await?;
    Ok(created(format!("/v1/channels/{}", channel.id), ChannelRecord::from(channel)))
}

impl RequestBody for CreateChannelBody {
    type Input = ChannelInput;
    fn into_input(self) -> ChannelInput {
        let Self { channel_type, display_name, identifier, status, credentials, default_team_id } = self;
        ChannelInput {
            channel_type,
            display_name,
            identifier,
            status,
            credentials: credentials.map(Into::into),
            default_team_id,
        }
    }
}
