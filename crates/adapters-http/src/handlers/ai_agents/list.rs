//! `GET /v1/ai-agents`

use actix_web::{web, HttpResponse};
use domain::common::page::PageRequest;
use domain::ValidationErrors;

use crate::authentication::V1Caller;
use crate::dto::{AiAgentList, AiAgentRecord};
use crate::error::ApiError;
use crate::handlers::PageQuery;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// Lists the workspace's AI agents, oldest first.
#[utoipa::path(
    get,
    operation_id = "list_ai_agents",
    path = "/v1/ai-agents",
    tag = "ai_agents",
    params(PageQuery),
    responses((status = 200, description = "A page of AI agents", body = AiAgentList))
)]
pub async fn list(
    caller: V1Caller,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = PageRequest::new(q.limit, q.cursor.as_deref()).map_err(|e| ApiError::Validation(ValidationErrors(e)))?;
    let page = state.ai_agents.list(caller.workspace_id, page).await?;
    Ok(HttpResponse::Ok().json(AiAgentList {
        data: page.data.into_iter().map(AiAgentRecord::from).collect(),
        next_cursor: page.next_cursor,
    }))
}
