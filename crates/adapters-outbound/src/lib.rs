#![doc = include_str!("../README.md")]

pub mod embeddings;
pub mod meta;
pub mod rerank;
pub mod smtp;
pub mod webhooks;
