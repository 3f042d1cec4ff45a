//! Workspace API keys (`docs/auth.md`, "Settings API for keys"): created on the `advanced` plan by
//! admins, shown in full once, stored as a digest, revoked (the record stays) or deleted.

pub mod model;
pub mod notices;
pub mod ports;
pub mod revoke;
pub mod roll;
pub mod service;

pub use model::*;
pub use notices::*;
pub use ports::*;
pub use revoke::*;
pub use roll::*;
pub use service::*;
