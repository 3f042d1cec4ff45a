//! Outbound webhooks in PostgreSQL: the transactional outbox, destinations, the delivery queue
//! and the delivery log.

mod destinations;
mod log;
pub mod outbox;
mod queue;

pub use destinations::PgWebhookRepository;
pub use queue::{PgDeliveryQueue, DELIVERIES};
