//! Threads (conversations): their status, who handles them and their labels.

pub mod labels;
pub mod lifecycle;
pub mod model;
pub mod ports;
pub mod record;
pub mod service;

pub use labels::*;
pub use lifecycle::*;
pub use model::*;
pub use ports::*;
pub use record::*;
pub use service::*;
