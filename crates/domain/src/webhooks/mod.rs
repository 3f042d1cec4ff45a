//! Outbound webhooks: destinations, the event catalog, Standard Webhooks signing, the retry
//! schedule, the SSRF address rules and the delivery engine.

pub mod delivery;
pub mod health;
pub mod limiter;
pub mod model;
pub mod payload;
pub mod ports;
pub mod retry;
pub mod service;
pub mod signing;
pub mod ssrf;

pub use model::*;
pub use ports::*;
pub use service::*;
