//! `GET /api/workspaces/{workspace_id}/api-keys`

use actix_web::{web, HttpResponse};

use crate::authentication::Authenticated;
use crate::dto::ApiKeyRecord;
use crate::error::ApiError;
use crate::handlers::{listed, PageQuery};
use crate::state::AppState;
use crate::strict::StrictQuery;

/// The workspace's keys, newest first, masked.
///
/// # Errors
/// 403 `forbidden` for non-admins.
pub async fn list(
    caller: Authenticated,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = state.api_keys.list(&caller, q.request()?).await?;
    let now = state.auth.clock.now();
    Ok(listed(page.map(|k| ApiKeyRecord::new(k, now))))
}
