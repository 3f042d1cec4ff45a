//! `GET /workspaces/{workspace_id}/co-admin/capabilities`: the capabilities manifest
//! (`docs/assistant.md`, "One registry, three faces").

use actix_web::http::header;
use actix_web::HttpResponse;
use domain::assistant::manifest;

use crate::authentication::Authenticated;
use crate::error::ApiError;

/// 200 with `can`, `cannot`, `tools` (JSON Schemas), `live_data`, `product_docs` and `guidance`.
///
/// # Errors
/// Only the caller check's.
pub async fn capabilities(_caller: Authenticated) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().insert_header((header::CACHE_CONTROL, "no-store")).json(manifest()))
}
