//! `/v1/messages`

pub mod create;
pub mod get;
pub mod list;
