//! `/v1/events` (the workspace's events feed) and `/v1/event-types` (the catalogue). The records
//! are in [`crate::dto::events`].

pub mod list;
pub mod types;
