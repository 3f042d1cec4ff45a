//! Workspaces, their plan tier and their provisioning.

pub mod model;
pub mod ports;
pub mod service;

pub use model::*;
pub use ports::*;
pub use service::*;
