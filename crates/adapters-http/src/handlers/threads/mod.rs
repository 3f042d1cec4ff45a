//! `/v1/threads/{thread_id}`: a conversation's status and assignee.

pub mod get;
pub mod update;
