//! `PATCH /v1/threads/{thread_id}`

use actix_web::{web, HttpResponse};
use domain::threads::ThreadChange;
use serde::{Deserialize, Deserializer};
use utoipa::ToSchema;

use crate::authentication::V1Caller;
use crate::dto::{AssigneeRecord, ThreadRecord};
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

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

/// `Some(None)` for an explicit null, so that null (unassign) differs from absent (keep).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
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
pub async fn update(
    caller: V1Caller,
    state: web::Data<AppState>,
    path: web::Path<i64>,
    StrictJson(body): StrictJson<UpdateThreadBody>,
) -> Result<HttpResponse, ApiError> {
    let assignee = body.assignee.as_ref().map(|a| a.as_ref().map(|a| (a.kind.as_str(), a.id)));
    let change = ThreadChange::new(body.status.as_deref(), assignee)?;
    let thread = state.threads.update(caller.workspace_id, path.into_inner(), &change).await?;
    Ok(HttpResponse::Ok().json(ThreadRecord::from(thread)))
}
