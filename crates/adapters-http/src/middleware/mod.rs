//! Cross-cutting middleware.

pub mod request_id;
pub mod request_metrics;
