//! Messaging channels: WhatsApp numbers, Messenger pages, Instagram accounts.

pub mod model;

pub use model::*;
