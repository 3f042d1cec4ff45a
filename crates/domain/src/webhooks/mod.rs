//! Outbound webhooks: destinations, the event catalog, Standard Webhooks signing, the retry
//! schedule, the SSRF address rules and the delivery engine.

pub mod controls;
pub mod delivery;
pub mod event;
pub mod event_type;
pub mod headers;
pub mod health;
pub mod limiter;
pub mod model;
pub mod notices;
pub mod pace;
pub mod payload;
pub mod ports;
pub mod public_url;
pub mod record;
pub mod retry;
pub mod samples;
pub mod service;
pub mod signing;
pub mod ssrf;
pub mod stats;
pub mod subjects;

pub use event::{DomainEvent, EventRecord};
pub use event_type::*;
pub use model::*;
pub use ports::*;
pub use public_url::public_url;
pub use record::*;
pub use service::*;
pub use subjects::EventSubjects;
