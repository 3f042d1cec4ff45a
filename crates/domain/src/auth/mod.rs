//! Credentials: API keys (`wmsk_`) and login tokens (`wmsu_`).

pub mod token;

pub use token::*;
