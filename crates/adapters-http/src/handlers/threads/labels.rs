//! `PUT /v1/threads/{thread_id}/labels`

use actix_web::{web, HttpResponse};
use domain::threads::LabelNames;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::authentication::V1Caller;
use crate::dto::ThreadRecord;
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

/// The labels a thread is to carry.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetThreadLabelsBody {
    /// Names of existing labels (ignoring case; repeats count once); `[]` removes every label.
    #[schema(example = json!(["vip", "billing"]), max_items = 50)]
    labels: Vec<String>,
}

/// Replaces the thread's labels. Emits `thread.labels_changed` when the set changes (the same set
/// again changes nothing and emits nothing).
#[utoipa::path(
    put,
    operation_id = "set_thread_labels",
    path = "/v1/threads/{thread_id}/labels",
    tag = "threads",
    params(("thread_id" = i64, Path, description = "Thread id")),
    request_body = SetThreadLabelsBody,
    responses((status = 200, description = "The thread with its new labels", body = ThreadRecord))
)]
pub async fn set(
    caller: V1Caller,
    state: web::Data<AppState>,
    path: web::Path<i64>,
    StrictJson(body): StrictJson<SetThreadLabelsBody>,
) -> Result<HttpResponse, ApiError> {
    let labels = LabelNames::new(&body.labels)?;
    let thread = state.threads.set_labels(caller.workspace_id, path.into_inner(), &labels).await?;
    Ok(HttpResponse::Ok().json(ThreadRecord::from(thread)))
}
