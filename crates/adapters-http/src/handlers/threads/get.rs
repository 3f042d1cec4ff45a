//! `GET /v1/threads/{thread_id}`

use actix_web::{web, HttpResponse};

use crate::authentication::V1Caller;
use crate::dto::ThreadRecord;
use crate::error::ApiError;
use crate::state::AppState;

/// One thread of the workspace.
#[utoipa::path(
    get,
    operation_id = "get_thread",
    path = "/v1/threads/{thread_id}",
    tag = "threads",
    params(("thread_id" = i64, Path, description = "Thread id")),
    responses((status = 200, description = "The thread", body = ThreadRecord))
)]
pub async fn get(caller: V1Caller, state: web::Data<AppState>, path: web::Path<i64>) -> Result<HttpResponse, ApiError> {
    let thread = state.threads.get(caller.workspace_id, path.into_inner()).await?;
    Ok(HttpResponse::Ok().json(ThreadRecord::from(thread)))
}
