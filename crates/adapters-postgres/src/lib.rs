#![doc = include_str!("../README.md")]

pub mod analytics;
pub mod api_keys;
pub mod assistant;
pub mod auth;
pub mod channels;
pub mod coalesce;
pub mod connectors;
pub mod docs;
pub mod error;
pub mod group_commit;
pub mod member_windows;
pub mod members;
pub mod messages;
pub mod migrate;
pub mod pool;
pub mod queue_stats;
pub mod replica;
pub mod schema;
pub mod seed;
pub mod service_keys;
pub mod sessions;
pub mod threads;
pub mod webhooks;
pub mod workspace;

pub use pool::{Db, PoolError, PoolUsage};
pub use workspace::PgWorkspaceRepository;

/// RFC 3339 in UTC, the API's timestamp format.
pub fn rfc3339(t: time::OffsetDateTime) -> String {
    t.to_offset(time::UtcOffset::UTC).format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}
