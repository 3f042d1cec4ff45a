//! `/v1/channels`

pub mod create;
pub mod get;
pub mod list;
pub mod update;
pub mod templates;
