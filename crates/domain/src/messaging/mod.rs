//! Threads and messages: listing and sending.

pub mod model;
pub mod ports;
pub mod service;

pub use model::*;
pub use ports::*;
pub use service::*;
