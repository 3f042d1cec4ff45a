//! `/v1/sla-policies`: targets for a conversation's cycle. The records are in
//! [`crate::dto::sla_policies`].

pub mod create;
pub mod delete;
pub mod list;
pub mod update;
