#![doc = include_str!("../README.md")]

pub mod access;
pub mod accounts;
pub mod ai_agents;
pub mod analytics;
pub mod api_keys;
pub mod assistant;
pub mod audit;
pub mod auth;
pub mod business_hours;
pub mod channels;
pub mod common;
pub mod connectors;
pub mod contacts;
pub mod docs;
pub mod events;
pub mod identity;
pub mod labels;
pub mod mail;
pub mod members;
pub mod messaging;
pub mod oauth;
pub mod rate_limit;
pub mod reports;
pub mod secret_scanning;
pub mod sessions;
pub mod sla;
pub mod teams;
pub mod threads;
pub mod users;
pub mod webhooks;
pub mod workspace;

pub use common::error::{is_unavailable, DatabaseUnavailable, FieldError, RepoError, ValidationErrors};
