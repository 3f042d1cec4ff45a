#![doc = include_str!("../README.md")]

pub mod accounts;
pub mod ai_agents;
pub mod analytics;
pub mod api_keys;
pub mod assignment;
pub mod assistant;
pub mod audit;
pub mod business_hours;
pub mod channels;
pub mod coalesce;
pub mod connectors;
pub mod contacts;
pub mod credentials;
pub mod docs;
pub mod docs_visitors;
pub mod error;
pub mod events;
pub mod group_commit;
pub mod key_notices;
pub mod labels;
pub mod leaked_credentials;
pub mod mail;
pub mod members;
pub mod messages;
pub mod migrate;
pub mod oauth;
pub mod pool;
pub mod prepared;
pub mod queue_stats;
pub mod rate_limit;
pub mod replica;
pub mod reports;
pub mod schema;
pub mod sealed;
pub mod seed;
pub mod service_keys;
pub mod sessions;
pub mod sla;
pub mod teams;
pub mod templates;
pub mod threads;
pub mod wake;
pub mod webhooks;
pub mod workspace;

pub use pool::{Db, PoolError, PoolUsage, Statements};
pub use workspace::PgWorkspaceRepository;

/// RFC 3339 in UTC, the API's timestamp format.
pub fn rfc3339(t: time::OffsetDateTime) -> String {
    t.to_offset(time::UtcOffset::UTC).format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}
