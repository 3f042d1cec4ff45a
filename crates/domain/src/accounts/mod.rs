//! Accounts as their owners control them: choosing a new password through a one-time link e-mailed
//! to the address (`docs/product/password-reset.md`).

pub mod decide;
pub mod ports;
pub mod service;

pub use decide::*;
pub use ports::*;
pub use service::*;
