//! Teams: groups of members that threads can be assigned to (`docs/contract.md`, "Integrator
//! resources").

pub mod assignment;
pub mod deletion;
pub mod model;
pub mod ports;
pub mod service;

pub use assignment::*;
pub use deletion::*;
pub use model::*;
pub use ports::*;
pub use service::*;
