//! `PATCH /v1/threads/{thread_id}`

use actix_web::{web, HttpResponse};
use domain::threads::ThreadChange;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::dto::{AssigneeRecord, ThreadRecord};
use crate::error::ApiError;
use crate::handlers::input::{present, ChangeInput, RequestBody};
use crate::state::AppState;

/// Fields to change; omitted fields keep their value.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateThreadBody {
    /// New status: 1 to 32 lowercase letters or `_` (`open`, `resolved`, `pending`…).
    #[schema(example = "resolved", pattern = "^[a-z_]{1,32}$")]
    status: Option<String>,
    /// The new assignee, or null to unassign.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<AssigneeRecord>)]
    assignee: Option<Option<AssigneeRecord>>,
}

/// Changes a thread's status or assignee. Emits `thread.status_changed` and `thread.assigned`.
#[utoipa::path(
    patch,
    operation_id = "update_thread",
    path = "/v1/threads/{thread_id}",
    tag = "threads",
    params(("thread_id" = i64, Path, description = "Thread id")),
    request_body = UpdateThreadBody,
    responses((status = 200, description = "The thread", body = ThreadRecord))
)]
pub async fn update(state: web::Data<AppState>, req: ChangeInput<UpdateThreadBody>) -> Result<HttpResponse, ApiError> {
    let body = req.input;
    let assignee = body.assignee.as_ref().map(|a| a.as_ref().map(|a| (a.kind.as_str(), a.id)));
    let change = ThreadChange::new(body.status.as_deref(), assignee)?;
    let thread = state.threads.update(req.workspace, req.id, &change).await?;
    Ok(HttpResponse::Ok().json(ThreadRecord::from(thread)))
}

/// Read through [`ThreadChange::new`], which names every bad field.
impl RequestBody for UpdateThreadBody {
    type Input = Self;
    fn into_input(self) -> Self {
        self
    }
}
