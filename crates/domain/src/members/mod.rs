//! Members of a workspace, as `/v1/users` shows and manages them.

pub mod decide;
pub mod model;
pub mod ports;
pub mod service;

pub use decide::*;
pub use model::*;
pub use ports::*;
pub use service::*;
