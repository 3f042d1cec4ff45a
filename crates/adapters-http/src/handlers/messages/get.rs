//! `GET /v1/messages/{message_id}`

use actix_web::{web, HttpResponse};
use domain::messaging::MessageId;

use crate::dto::MessageRecord;
use crate::error::ApiError;
use crate::handlers::input::Lookup;
use crate::state::AppState;

/// One message of the workspace.
#[utoipa::path(
    get,
    operation_id = "get_message",
    path = "/v1/messages/{message_id}",
    tag = "messages",
    params(("message_id" = i64, Path, description = "Message id")),
    responses((status = 200, description = "The message", body = MessageRecord))
)]
pub async fn get(state: web::Data<AppState>, req: Lookup) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(MessageRecord::from(state.messages.get(req.workspace, MessageId(req.id)).await?)))
}
