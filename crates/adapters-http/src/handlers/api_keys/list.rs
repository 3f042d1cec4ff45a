//! `GET /api/workspaces/{workspace_id}/api-keys`

use actix_web::{web, HttpResponse};
use domain::common::page::PageRequest;
use domain::ValidationErrors;
use serde::Deserialize;

use crate::authentication::Member;
use crate::dto::ApiKeyRecord;
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// Paging of the key list.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListKeysQuery {
    /// Page size, 1 to 100.
    limit: Option<i64>,
    /// `next_cursor` of the previous page.
    cursor: Option<String>,
}

/// The workspace's keys, newest first, masked.
///
/// # Errors
/// 403 `forbidden` for non-admins.
pub async fn list(
    member: Member,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<ListKeysQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = PageRequest::new(q.limit, q.cursor.as_deref()).map_err(|e| ApiError::Validation(ValidationErrors(e)))?;
    let page = state.api_keys.list(&member.into(), page).await?;
    let now = state.auth.clock.now();
    let data: Vec<ApiKeyRecord> = page.data.into_iter().map(|k| ApiKeyRecord::new(k, now)).collect();
    Ok(HttpResponse::Ok().json(serde_json::json!({ "data": data, "next_cursor": page.next_cursor })))
}
