//! Threads and messages: listing and sending.

pub mod model;
pub mod ports;
pub mod recipients;
pub mod record;
pub mod service;
pub mod window;

pub use model::*;
pub use ports::*;
pub use record::*;
pub use service::*;
