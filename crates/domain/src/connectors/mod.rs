//! Channel connectors: sending through WhatsApp, Messenger and Instagram, and the platforms'
//! callbacks (delivery statuses and inbound messages).

pub mod callbacks;
pub mod inbound;
pub mod model;
pub mod ports;
pub mod service;
pub mod template_sync;
pub mod templates;

pub use callbacks::{
    signer_of, CallbackError, CallbackReport, CallbackService, ReceivedCallback, CALLBACK_THROTTLE,
    MAX_CALLBACK_ACCOUNTS, MAX_CANDIDATE_SECRETS,
};
pub use model::*;
pub use ports::*;
pub use service::*;
