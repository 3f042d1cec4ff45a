//! `GET /healthz`: the process is alive and serving.

use actix_web::HttpResponse;

/// Always 200 while the server accepts requests; touches no dependency.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "status": "ok" }))
}
