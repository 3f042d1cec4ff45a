//! `GET /v1/threads/{thread_id}`

use actix_web::{web, HttpResponse};

use crate::dto::ThreadRecord;
use crate::error::ApiError;
use crate::handlers::input::Lookup;
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
pub async fn get(state: web::Data<AppState>, req: Lookup) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(ThreadRecord::from(state.threads.get(req.workspace, req.id).await?)))
}
