//! `PATCH /v1/threads/{thread_id}`

use actix_web::{web, HttpResponse};
use domain::threads::ThreadChangeInput;
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
    /// New status: `open`, `pending`, `snoozed` or `resolved`.
    #[schema(example = "snoozed")]
    status: Option<String>,
    /// With `snoozed` only: when the thread opens again (RFC 3339, in the future, at most 365 days
    /// ahead); without it a snooze lasts until the contact writes.
    #[schema(example = "2026-12-01T09:00:00Z", format = DateTime)]
    snoozed_until: Option<String>,
    /// The new assignee, or null to unassign.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<AssigneeRecord>)]
    assignee: Option<Option<AssigneeRecord>>,
}

/// Changes a thread's status (snoozing it until a time or until the contact writes) or assignee.
/// Emits `thread.status_changed` and `thread.assigned`, once per change.
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
    let input = ThreadChangeInput {
        status: body.status,
        snoozed_until: body.snoozed_until,
        assignee: body.assignee.map(|a| a.map(|a| (a.kind, a.id))),
    };
    let thread = state.threads.update(req.workspace, req.id, input).await?;
    Ok(HttpResponse::Ok().json(ThreadRecord::from(thread)))
}

/// Read through `ThreadChange::new` (in the service), which names every bad field.
impl RequestBody for UpdateThreadBody {
    type Input = Self;
    fn into_input(self) -> Self {
        self
    }
}
