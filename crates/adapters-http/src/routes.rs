//! Every path of the service at a glance.

use actix_web::web::{self, ServiceConfig};

use crate::extract::{json_config, path_config, query_config};
use crate::handlers::{fallback, health};

/// Registers every route; the binary wraps it with middleware and state.
pub fn configure(cfg: &mut ServiceConfig) {
    cfg.app_data(json_config())
        .app_data(path_config())
        .app_data(query_config())
        .service(
            web::resource("/healthz")
                .route(web::get().to(health::healthz))
                .default_service(web::to(fallback::method_not_allowed)),
        )
        .service(
            web::resource("/readyz")
                .route(web::get().to(health::readyz))
                .default_service(web::to(fallback::method_not_allowed)),
        )
        .default_service(web::to(fallback::not_found));
}
