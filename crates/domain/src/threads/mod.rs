//! Threads (conversations): their status and who handles them.

pub mod model;
pub mod ports;

pub use model::*;
pub use ports::*;
