//! `GET /readyz`: the database is reachable and fully migrated.

use actix_web::{web, HttpResponse};

use crate::error::ApiError;
use crate::state::AppState;

/// 200 when ready; 503 problem+json naming what is not.
///
/// # Errors
/// [`ApiError::ServiceUnavailable`] when a dependency is not ready.
pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    state.health.ready().await.map_err(ApiError::ServiceUnavailable)?;
    let mut body = serde_json::json!({ "status": "ready" });
    if let Some(replica) = state.health.replica() {
        body["replica"] = replica;
    }
    Ok(HttpResponse::Ok().json(body))
}
