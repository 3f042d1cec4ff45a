//! `/v1/ai-agents`: the workspace's AI agents, which threads can be assigned to (read-only).
//! The records are in [`crate::dto::ai_agents`].

pub mod get;
pub mod list;
