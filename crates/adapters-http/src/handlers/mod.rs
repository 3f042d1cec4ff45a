//! Request handlers, one file per action.

pub mod fallback;
pub mod health;
