//! `/v1/teams`: groups of members that threads can be assigned to. The records are in
//! [`crate::dto::teams`].

pub mod create;
pub mod delete;
pub mod get;
pub mod list;
pub mod update;
