//! `GET /v1/ai-agents/{agent_id}`

use actix_web::{web, HttpResponse};

use crate::dto::AiAgentRecord;
use crate::error::ApiError;
use crate::handlers::input::Lookup;
use crate::state::AppState;

/// One AI agent of the workspace.
#[utoipa::path(
    get,
    operation_id = "get_ai_agent",
    path = "/v1/ai-agents/{agent_id}",
    tag = "ai_agents",
    params(("agent_id" = i64, Path, description = "AI agent id")),
    responses((status = 200, description = "The AI agent", body = AiAgentRecord))
)]
pub async fn get(state: web::Data<AppState>, req: Lookup) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(AiAgentRecord::from(state.ai_agents.get(req.workspace, req.id).await?)))
}
