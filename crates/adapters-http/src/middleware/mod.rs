//! Cross-cutting middleware.

pub mod request_id;
