//! Contacts: the customers a workspace talks to, their REST resource and their erasure.

pub mod model;
pub mod ports;
pub mod service;

pub use model::*;
pub use ports::*;
pub use service::*;
