//! `GET /v1/ai-agents/{agent_id}`

use actix_web::{web, HttpResponse};

use crate::authentication::V1Caller;
use crate::dto::AiAgentRecord;
use crate::error::ApiError;
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
pub async fn get(caller: V1Caller, state: web::Data<AppState>, path: web::Path<i64>) -> Result<HttpResponse, ApiError> {
    let agent = state.ai_agents.get(caller.workspace_id, path.into_inner()).await?;
    Ok(HttpResponse::Ok().json(AiAgentRecord::from(agent)))
}
