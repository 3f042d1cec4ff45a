//! Leaked credentials: GitHub's secret-scanning partner alerts. GitHub sends every token of the wms
//! key, login token and app token formats it finds in a public repository, signed with ECDSA; each
//! live key, login token or app token (its grant) among them is revoked at once, each live
//! invitation or password-reset link (they share the login tokens' format) voided, and the alert
//! is answered with a true/false positive label per token (`docs/secret-scanning.md`).

pub mod alert;
pub mod app_token;
pub mod link;
pub mod login_token;
pub mod ports;
pub mod service;
pub mod signature;

pub use alert::*;
pub use app_token::*;
pub use link::*;
pub use login_token::*;
pub use ports::*;
pub use service::*;
pub use signature::*;
