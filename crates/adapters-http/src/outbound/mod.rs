//! Clients of services that wms calls.

pub mod embeddings;
pub mod meta;
pub mod rerank;
pub mod webhooks;
