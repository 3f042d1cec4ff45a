//! Messaging channels: WhatsApp numbers, Messenger pages, Instagram accounts.

pub mod figures;
pub mod model;
pub mod ports;
pub mod record;
pub mod service;
pub mod validate;

pub use figures::*;
pub use model::*;
pub use ports::*;
pub use record::*;
pub use service::*;
pub use validate::*;
