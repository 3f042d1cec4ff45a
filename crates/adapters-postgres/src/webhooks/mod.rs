//! Outbound webhooks in PostgreSQL: the transactional outbox, destinations, the delivery queue
//! and the delivery log.

mod destinations;
mod log;
pub mod outbox;
mod pace;
mod queue;
mod stats;

pub use destinations::PgWebhookRepository;
pub use pace::{PACE_IN_FLIGHT, PACE_RATE};
pub use queue::{PgDeliveryQueue, DELIVERIES};
