//! Request handlers, one file per action.

pub mod api_keys;
pub mod auth;
pub mod channels;
pub mod co_admin;
pub mod events;
pub mod fallback;
pub mod health;
pub mod messages;
pub mod platform_webhooks;
pub mod threads;
pub mod users;
pub mod webhooks;
