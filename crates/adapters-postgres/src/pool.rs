//! The connection pool shared by every repository.

use std::time::Duration;

use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// A pooled connection.
pub type Conn = Object<AsyncPgConnection>;

/// Why the pool could not hand out a connection.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// The pool could not be built (bad URL or size).
    #[error("cannot build the database pool: {0}")]
    Build(String),
    /// No connection could be made or borrowed in time.
    #[error("database unavailable: {0}")]
    Unavailable(String),
}

/// The database: a pool of async connections.
#[derive(Clone)]
pub struct Db {
    pool: Pool<AsyncPgConnection>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("status", &self.pool.status()).finish()
    }
}

impl Db {
    /// A pool of at most `max_size` connections to `url`; connections are made lazily.
    ///
    /// # Errors
    /// [`PoolError::Build`] when the pool cannot be configured.
    pub fn new(url: &str, max_size: usize, wait: Duration) -> Result<Self, PoolError> {
        // Fast recycling: a connection handed back out is checked for a broken transaction and
        // a closed socket (which the driver notices as soon as the server closes it, e.g. on a
        // restart), without the default's `SELECT 1`. That ping is a database round trip on
        // every checkout, doubling the round trips of a one-query request (docs/benchmarks.md,
        // "auth"); the price is that a connection silently cut by the network fails the one
        // query that finds out, instead of being replaced before it.
        let mut config = ManagerConfig::default();
        config.recycling_method = RecyclingMethod::Fast;
        let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(url, config);
        let pool = Pool::builder(manager)
            .max_size(max_size)
            .wait_timeout(Some(wait))
            .create_timeout(Some(wait))
            .runtime(deadpool_runtime())
            .build()
            .map_err(|e| PoolError::Build(e.to_string()))?;
        Ok(Self { pool })
    }

    /// Borrows a connection.
    ///
    /// # Errors
    /// [`PoolError::Unavailable`] when the database cannot be reached in time.
    pub async fn conn(&self) -> Result<Conn, PoolError> {
        self.pool.get().await.map_err(|e| PoolError::Unavailable(e.to_string()))
    }

    /// Whether the database answers a trivial query.
    pub async fn ping(&self) -> bool {
        match self.conn().await {
            Ok(mut c) => diesel::sql_query("SELECT 1").execute(&mut c).await.is_ok(),
            Err(_) => false,
        }
    }
}

fn deadpool_runtime() -> deadpool::Runtime {
    deadpool::Runtime::Tokio1
}
