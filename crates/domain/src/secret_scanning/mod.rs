//! Leaked keys: GitHub's secret-scanning partner alerts. GitHub sends every token of the wms key
//! and login token formats it finds in a public repository, signed with ECDSA; each live key or
//! login token among them is revoked at once, and the alert is answered with a true/false positive
//! label per token (`docs/secret-scanning.md`).

pub mod alert;
pub mod login_token;
pub mod ports;
pub mod service;
pub mod signature;

pub use alert::*;
pub use login_token::*;
pub use ports::*;
pub use service::*;
pub use signature::*;
