//! Events as a contract (`docs/contract.md`): the workspace's durable events feed (`GET /v1/events`) and
//! replays of a window of it to a webhook destination. The events are the webhook outbox's rows,
//! so an event's feed id is the `webhook-id` of its deliveries.

mod model;
mod ports;
mod service;

pub use model::{
    EventPosition, FeedPage, FeedQuery, ReplayCandidate, ReplayWindow, ReplayedDelivery, StoredEvent,
    REPLAY_ORDERING_KEY,
};
pub use ports::EventStore;
#[cfg(any(test, feature = "mocks"))]
pub use ports::MockEventStore;
pub use service::{EventsService, FeedError, FeedInput, ReplayError, ReplayInput};
