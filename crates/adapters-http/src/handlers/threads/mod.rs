//! `/v1/threads`: conversations, their status, assignee and labels.

pub mod get;
pub mod labels;
pub mod list;
pub mod update;
