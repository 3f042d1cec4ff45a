//! `PUT /v1/threads/{thread_id}/labels`

use actix_web::{web, HttpResponse};
use domain::threads::LabelNames;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::dto::ThreadRecord;
use crate::error::ApiError;
use crate::handlers::input::{ChangeInput, RequestBody};
use crate::state::AppState;

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
pub async fn set(state: web::Data<AppState>, req: ChangeInput<SetThreadLabelsBody>) -> Result<HttpResponse, ApiError> {
    let labels = LabelNames::new(&req.input)?;
    let thread = state.threads.set_labels(req.workspace, req.id, &labels).await?;
    Ok(HttpResponse::Ok().json(ThreadRecord::from(thread)))
}

/// The names, read through [`LabelNames::new`].
impl RequestBody for SetThreadLabelsBody {
    type Input = Vec<String>;
    fn into_input(self) -> Vec<String> {
        self.labels
    }
}
