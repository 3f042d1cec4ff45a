//! Clients of services that wms calls.

pub mod embeddings;
pub mod rerank;
pub mod webhooks;
