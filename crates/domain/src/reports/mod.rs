//! Conversation reports (docs/contract.md, "Conversation reports, business hours and SLAs"): the
//! facts each event adds ([`facts::decide`]), a stored history replayed through it
//! ([`history::replay`]), the report's query and record, its CSV.

pub mod csv;
pub mod facts;
pub mod history;
pub mod ports;
pub mod report;
pub mod service;

pub use facts::*;
pub use history::*;
pub use ports::*;
pub use report::*;
pub use service::*;
