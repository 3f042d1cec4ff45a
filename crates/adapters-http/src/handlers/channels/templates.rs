//! `GET /v1/channels/{channel_id}/templates` and `POST /v1/channels/{channel_id}/templates/sync`:
//! the WhatsApp message templates of a channel, as Meta last reported them.

use actix_web::{web, HttpResponse};
use domain::channels::ChannelId;
use domain::connectors::templates::{TemplateRecord, WhatsappTemplate};

use crate::dto::TemplateList;
use crate::error::ApiError;
use crate::handlers::input::Lookup;
use crate::handlers::PageQuery;
use crate::state::AppState;
use crate::strict::StrictQuery;

fn listed(templates: Vec<WhatsappTemplate>) -> HttpResponse {
    HttpResponse::Ok().json(TemplateList { data: templates.into_iter().map(Into::into).collect(), next_cursor: None })
}

/// The channel's WhatsApp templates with their review status; only `approved` ones can be sent.
#[utoipa::path(
    get,
    operation_id = "list_channel_templates",
    path = "/v1/channels/{channel_id}/templates",
    tag = "channels",
    params(("channel_id" = i64, Path, description = "Channel id"), PageQuery),
    responses((status = 200, description = "A page of the channel's templates by name and language (none for Messenger and Instagram)", body = TemplateList))
)]
pub async fn list(
    state: web::Data<AppState>,
    req: Lookup,
    StrictQuery(q): StrictQuery<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = state.templates.page(req.workspace, ChannelId(req.id), q.request()?).await?;
    Ok(crate::handlers::listed(page.map(TemplateRecord::from)))
}

/// Reads the channel's templates from Meta now (`GET /{waba_id}/message_templates`) and answers
/// the new list; templates gone at Meta disappear. wms also syncs when credentials are set and
/// every `connectors.template_sync_minutes`. A Messenger or Instagram channel has no templates:
/// an empty list, Meta not asked.
#[utoipa::path(
    post,
    operation_id = "sync_channel_templates",
    path = "/v1/channels/{channel_id}/templates/sync",
    tag = "channels",
    params(("channel_id" = i64, Path, description = "Channel id")),
    responses(
        (status = 200, description = "The channel's templates as Meta has them now (none for Messenger and Instagram)", body = TemplateList),
        (status = 422, description = "The channel's credentials have no `waba_id` (`validation_failed` naming `credentials.waba_id`)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 502, description = "Meta cannot be reached or refused the request", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn sync(state: web::Data<AppState>, req: Lookup) -> Result<HttpResponse, ApiError> {
    Ok(listed(state.templates.sync(req.workspace, ChannelId(req.id)).await?))
}
