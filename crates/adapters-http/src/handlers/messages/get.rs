//! `GET /v1/messages/{message_id}`

use actix_web::{web, HttpResponse};
use domain::messaging::MessageId;

use crate::authentication::V1Caller;
use crate::dto::MessageRecord;
use crate::error::ApiError;
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
pub async fn get(caller: V1Caller, state: web::Data<AppState>, path: web::Path<i64>) -> Result<HttpResponse, ApiError> {
    let message = state.messages.get(caller.workspace_id, MessageId(path.into_inner())).await?;
    Ok(HttpResponse::Ok().json(MessageRecord::from(message)))
}
