//! The HTTP face of wms: actix-web routes, handlers, middleware and pages. Handlers translate
//! requests into domain calls and domain errors into RFC 9457 problem responses.

pub mod auth;
pub mod error;
pub mod extract;
pub mod handlers;
pub mod middleware;
pub mod routes;
pub mod state;

pub use error::{ApiError, Problem};
pub use routes::configure;
pub use state::{AppState, HealthCheck};
