//! `/v1/users/{user_id}`: members of the caller's workspace.

pub mod delete;
pub mod get;
pub mod update;
