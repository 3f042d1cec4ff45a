//! Contacts: the customers a workspace talks to.

pub mod model;

pub use model::*;
