//! Cross-cutting middleware.

pub mod database_stall;
pub mod request_id;
pub mod request_metrics;
