//! Users, their credentials and their memberships in workspaces.

pub mod model;

pub use model::*;
