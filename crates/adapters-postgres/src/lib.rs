//! PostgreSQL adapters: the connection pool, the embedded migrations and one repository per area.

pub mod api_keys;
pub mod error;
pub mod migrate;
pub mod pool;
pub mod schema;
pub mod seed;
pub mod service_keys;
pub mod workspace;

pub use pool::{Db, PoolError};
pub use workspace::PgWorkspaceRepository;
