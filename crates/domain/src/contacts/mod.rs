//! Contacts: the customers a workspace talks to, their REST resource and their erasure.

pub mod erasure;
pub mod model;
pub mod ports;
pub mod service;

pub use erasure::{plan_erasure, ErasedMessage, ErasureFacts, ErasurePlan, StoredEvent, ERASED_REASON};
pub use model::*;
pub use ports::*;
pub use service::*;
