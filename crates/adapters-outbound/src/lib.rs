#![doc = include_str!("../README.md")]

pub mod embeddings;
pub mod github_keys;
pub mod meta;
pub mod rerank;
pub mod smtp;
pub mod webhooks;
