//! Labels: names with a colour that threads carry (`docs/contract.md`, "Integrator resources").

pub mod model;
pub mod ports;
pub mod service;

pub use model::*;
pub use ports::*;
pub use service::*;
