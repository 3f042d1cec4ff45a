//! `POST /workspaces/{workspace_id}/co-admin/tools/execute`: runs one tool for the member's
//! workspace. Body `{"tool", "arguments"}`, answer `{"tool", "result"}` (`docs/contract.md`).

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::authentication::Authenticated;
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

/// The request body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecuteBody {
    /// The tool's name.
    pub tool: String,
    /// Its arguments; absent or null means none.
    #[serde(default)]
    pub arguments: Value,
}

/// 200 with the tool's result.
///
/// # Errors
/// 422 `validation_failed` naming `tool` or `arguments.<name>`; 503 when the tool is not
/// configured; the caller check's 401/403/404.
pub async fn execute(
    Authenticated(caller): Authenticated,
    state: web::Data<AppState>,
    body: StrictJson<ExecuteBody>,
) -> Result<HttpResponse, ApiError> {
    let ExecuteBody { tool, arguments } = body.0;
    let result = state.assistant.tools.execute_as(&caller, &tool, &arguments).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(json!({ "tool": tool, "result": result })))
}
