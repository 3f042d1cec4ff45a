//! Members of a workspace, as `/v1/users/{user_id}` shows and manages them.

pub mod model;
pub mod ports;

pub use model::*;
pub use ports::*;
