//! `GET /v1/ai-agents`

use actix_web::{web, HttpResponse};

use crate::dto::{AiAgentList, AiAgentRecord};
use crate::error::ApiError;
use crate::handlers::input::Listing;
use crate::handlers::{listed, PageQuery};
use crate::state::AppState;

/// Lists the workspace's AI agents, oldest first.
#[utoipa::path(
    get,
    operation_id = "list_ai_agents",
    path = "/v1/ai-agents",
    tag = "ai_agents",
    params(PageQuery),
    responses((status = 200, description = "A page of AI agents", body = AiAgentList))
)]
pub async fn list(state: web::Data<AppState>, req: Listing) -> Result<HttpResponse, ApiError> {
    Ok(listed(state.ai_agents.list(req.workspace, req.page).await?.map(AiAgentRecord::from)))
}
