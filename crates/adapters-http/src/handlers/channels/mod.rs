//! `/v1/channels`

pub mod create;
pub mod get;
pub mod list;
pub mod templates;
pub mod update;
