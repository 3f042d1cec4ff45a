//! `/v1/labels`: the names threads can carry. The records are in [`crate::dto::labels`].

pub mod create;
pub mod delete;
pub mod list;
pub mod update;
