#![doc = include_str!("../README.md")]

pub mod access;
pub mod audit_context;
pub mod authentication;
pub mod domain_errors;
pub mod dto;
pub mod error;
pub mod event_catalog;
pub mod extract;
pub mod handlers;
pub mod mcp;
pub mod middleware;
pub mod openapi;
pub mod pages;
pub mod rate_limit;
pub mod routes;
pub mod session_cookie;
pub mod state;
pub mod strict;

pub use error::{ApiError, Problem};
pub use routes::configure;
pub use state::{AppState, HealthCheck};
