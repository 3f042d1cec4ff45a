//! `/v1/contacts`: the people a workspace talks to, for integrators.

pub mod create;
pub mod delete;
pub mod get;
pub mod list;
pub mod update;
