//! Conversation reports (docs/contract.md, "Conversation reports, business hours and SLAs"): the
//! facts each event adds ([`facts::decide`]), a stored history replayed through it
//! ([`history::replay`]), the report's query and record, how it reads its period from the rollup ([`rollup`]), its CSV, and the first response time
//! distribution of its settings page ([`distribution`]).

pub mod csv;
pub mod distribution;
pub mod facts;
pub mod history;
pub mod ports;
pub mod report;
pub mod rollup;
pub mod service;

pub use distribution::*;
pub use facts::*;
pub use history::*;
pub use ports::*;
pub use report::*;
pub use rollup::*;
pub use service::*;
