//! The one identity path: every credential a request carries becomes one
//! [`Caller`](crate::access::Caller), which the access policy then judges.

pub mod service;

pub use service::IdentityService;
