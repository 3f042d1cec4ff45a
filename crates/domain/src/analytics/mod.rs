//! The Analytics page's exports, which the assistant's `get_channel_analytics` tool deliberately
//! lacks (`docs/product/analytics-export.md`, "The assistant does not export"): the daily series
//! as CSV and the top countries by contact country. The figures themselves are the tool's
//! ([`crate::assistant::channel_analytics`]).

pub mod csv;
pub mod model;
pub mod ports;

pub use model::*;
pub use ports::*;
