//! Conversation reports (docs/contract.md, "Conversation reports, business hours and SLAs"): the
//! facts each event adds ([`facts::decide`]), the report's query and record, its CSV.

pub mod csv;
pub mod facts;
pub mod ports;
pub mod report;
pub mod service;

pub use facts::*;
pub use ports::*;
pub use report::*;
pub use service::*;
