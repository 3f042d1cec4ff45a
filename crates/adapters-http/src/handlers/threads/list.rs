//! `GET /v1/threads`

use actix_web::{web, HttpResponse};
use domain::threads::{ThreadFilter, ThreadFilterInput};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::authentication::Authenticated;
use crate::dto::{ThreadList, ThreadRecord};
use crate::error::ApiError;
use crate::handlers::query::QueryProblems;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// The kinds of assignee.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AssigneeTypeDto {
    /// A member of the workspace.
    User,
    /// A team.
    Team,
    /// An AI agent.
    AiAgent,
}

/// Query of the thread listing. Every filter given must hold.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListThreadsQuery {
    /// Only threads with this status (`open`, `resolved`…).
    #[param(pattern = "^[a-z_]{1,32}$", example = "open")]
    status: Option<String>,
    /// Only threads of this channel.
    channel_id: Option<i64>,
    /// Only threads of this contact.
    contact_id: Option<i64>,
    /// Only threads assigned to this kind of assignee (any of them, or the one `assignee_id` names).
    #[param(value_type = Option<AssigneeTypeDto>)]
    assignee_type: Option<String>,
    /// Only threads assigned to this user, team or AI agent; needs `assignee_type`.
    assignee_id: Option<i64>,
    /// Only threads carrying the label of this name (ignoring case); an unknown name is 422.
    #[param(example = "vip")]
    label: Option<String>,
    /// Only threads changed (status, assignee, labels, a message) at or after this time (RFC 3339).
    #[param(format = DateTime)]
    updated_since: Option<String>,
    /// Page size, 1 to 100.
    #[param(minimum = 1, maximum = 100, default = 25)]
    limit: Option<i64>,
    /// `next_cursor` of the previous page of the same listing: a cursor read with other filters
    /// is refused (422 naming `cursor`).
    cursor: Option<String>,
}

/// Lists threads newest first (by id). Pagination is by cursor: stable while threads are added,
/// and as fast on a deep page as on the first.
#[utoipa::path(
    get,
    operation_id = "list_threads",
    path = "/v1/threads",
    tag = "threads",
    params(ListThreadsQuery),
    responses((status = 200, description = "A page of threads", body = ThreadList))
)]
pub async fn list(
    caller: Authenticated,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<ListThreadsQuery>,
) -> Result<HttpResponse, ApiError> {
    let mut problems = QueryProblems::with_limit(q.limit);
    let updated_since = problems.time("updated_since", q.updated_since.as_deref());
    let filter = ThreadFilter::new(ThreadFilterInput {
        status: q.status,
        channel_id: q.channel_id,
        contact_id: q.contact_id,
        assignee_type: q.assignee_type,
        assignee_id: q.assignee_id,
        label: q.label,
        updated_since,
    })
    .map_err(|e| problems.extend(e.0))
    .ok();
    let (filter, page) = problems.page(q.limit, q.cursor.as_deref(), filter, ThreadFilter::cursor_key)?;
    let page = state.threads.list(caller.workspace_id, &filter, page).await?;
    Ok(crate::handlers::listed(page.map(ThreadRecord::from)))
}
