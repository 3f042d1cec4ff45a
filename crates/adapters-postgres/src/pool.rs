//! The connection pools behind every repository.
//!
//! One [`Db`] is shared by every repository, but it is not one pool: each HTTP worker thread
//! adopts a pool of its own ([`Db::adopt_thread`]) and every other thread (the background work:
//! webhook delivery, connectors, documentation ingest) uses the shared pool. A connection's I/O
//! is driven by a task on the runtime that opened it, so with one pool for everything the answers
//! to an HTTP worker's queries arrived on another thread and had to be handed over with a wake-up
//! across threads every time; a worker's own connections are driven by the worker itself
//! (`docs/benchmarks.md`, "Authentication and the rate limit").

use std::sync::Arc;
use std::thread::ThreadId;
use std::time::Duration;

use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use thread_local::ThreadLocal;

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

/// How a connection sends its statements.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Statements {
    /// Prepared once per connection and kept (named statements, the plan cached): a direct
    /// connection to PostgreSQL, or a PgBouncer 1.21+ that keeps prepared statements.
    #[default]
    Prepared,
    /// Each statement the unnamed one, parsed, bound and run in one round trip, nothing kept:
    /// through a pooler in transaction mode that keeps no prepared statements (PgBouncer before
    /// 1.21, Debian 12's 1.18), `database.pgbouncer = true`. Every statement is planned each time.
    Unnamed,
}

/// How the connection pools of a [`Db`] are used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolUsage {
    /// The most connections the pools may open.
    pub max: usize,
    /// Connections open.
    pub open: usize,
    /// Open connections not lent out.
    pub idle: usize,
    /// Tasks waiting for a connection.
    pub waiting: usize,
}

/// The database: a pool of async connections for the threads that adopted one, and a shared
/// pool for the others.
#[derive(Clone)]
pub struct Db {
    shared: Pool<AsyncPgConnection>,
    threads: Arc<ThreadPools>,
    /// This instance's worker wake-ups (`crate::wake`).
    wake: Arc<crate::wake::Wake>,
    /// The replica this handle reads from while it is usable ([`Db::reading_from`]).
    replica: Option<Arc<crate::replica::Replica>>,
    /// The last answer of [`Db::answers`] and when it was had; locked while a probe runs.
    probe: Arc<tokio::sync::Mutex<Option<(std::time::Instant, bool)>>>,
}

/// A message for a connection that could not be had within `wait`.
fn no_connection(wait: Duration, why: impl std::fmt::Display) -> PoolError {
    PoolError::Unavailable(format!("no database connection within {} ms: {why}", wait.as_millis()))
}

/// What it takes to open more pools, and the pools of the threads that adopted one.
struct ThreadPools {
    url: String,
    wait: Duration,
    statements: Statements,
    /// Each with the thread that adopted it: `thread_local` hands the slot of an exited thread to
    /// a new thread, which must not borrow from a pool driven by a runtime that is gone (std's
    /// `ThreadId`s are never reused, so the owner check is exact).
    pools: ThreadLocal<(ThreadId, Pool<AsyncPgConnection>)>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let threads: Vec<_> = self.threads.pools.iter().map(|(_, p)| p.status()).collect();
        f.debug_struct("Db").field("shared", &self.shared.status()).field("threads", &threads).finish()
    }
}

impl Db {
    /// A pool of at most `max_size` connections to `url`; connections are made lazily. No wait
    /// for a connection (for a free one, or for a new one to be opened) lasts longer than
    /// `wait` (`database.acquire_timeout_ms`).
    ///
    /// # Errors
    /// [`PoolError::Build`] when the pool cannot be configured.
    pub fn new(url: &str, max_size: usize, wait: Duration) -> Result<Self, PoolError> {
        Self::with_statements(url, max_size, wait, Statements::Prepared)
    }

    /// [`Db::new`] with connections that send their statements as `statements` says.
    ///
    /// # Errors
    /// [`PoolError::Build`] when the pool cannot be configured.
    pub fn with_statements(
        url: &str,
        max_size: usize,
        wait: Duration,
        statements: Statements,
    ) -> Result<Self, PoolError> {
        Ok(Self {
            shared: pool(url, max_size, wait, statements)?,
            threads: Arc::new(ThreadPools { url: url.to_owned(), wait, statements, pools: ThreadLocal::new() }),
            wake: Arc::default(),
            replica: None,
            probe: Arc::default(),
        })
    }

    /// The wake-ups of this instance's workers, shared by every clone.
    pub fn wake(&self) -> &crate::wake::Wake {
        &self.wake
    }

    /// Gives the calling thread a pool of its own of at most `max_size` connections (lazily
    /// opened, so driven by this thread's runtime): from now on [`Db::conn`] on this thread
    /// borrows from it. For the HTTP workers, each a thread with a single-threaded runtime. A
    /// thread that already has a pool keeps it.
    ///
    /// # Errors
    /// [`PoolError::Build`] when the pool cannot be configured, or when this thread was handed
    /// the slot of an exited thread (it then borrows from the shared pool).
    pub fn adopt_thread(&self, max_size: usize) -> Result<(), PoolError> {
        let t = &self.threads;
        let me = std::thread::current().id();
        let (owner, _) = t.pools.get_or_try(|| pool(&t.url, max_size, t.wait, t.statements).map(|p| (me, p)))?;
        if *owner == me {
            Ok(())
        } else {
            Err(PoolError::Build("this thread reuses the slot of an exited thread".into()))
        }
    }

    /// Borrows a connection: from the calling thread's pool if it adopted one, else from the
    /// shared pool.
    ///
    /// # Errors
    /// [`PoolError::Unavailable`] when the database cannot be reached in time.
    pub async fn conn(&self) -> Result<Conn, PoolError> {
        if let Some(replica) = &self.replica {
            if let Some(conn) = replica.conn().await {
                return Ok(conn);
            }
        }
        let pool = match self.threads.pools.get() {
            Some((owner, pool)) if *owner == std::thread::current().id() => pool,
            _ => &self.shared,
        };
        let wait = self.threads.wait;
        // deadpool bounds the wait for a free slot and the opening of a connection separately;
        // one deadline over both is what the setting promises.
        match tokio::time::timeout(wait, pool.get()).await {
            Ok(Ok(conn)) => Ok(conn),
            Ok(Err(e)) => Err(no_connection(wait, e)),
            Err(_) => Err(no_connection(wait, "timed out")),
        }
    }

    /// This database for read-only work that may lag a little (docs/contract.md, "Operations at
    /// scale"): [`Db::conn`] then borrows from `replica` while its replay lag is under its bound,
    /// else (and whenever it cannot lend a connection at once) from this database.
    pub fn reading_from(&self, replica: &Arc<crate::replica::Replica>) -> Db {
        Db { replica: Some(replica.clone()), ..self.clone() }
    }

    /// Drops the idle connections of the shared pool (a replica out of use lets its server stop).
    pub(crate) fn drop_idle(&self) {
        let _ = self.shared.retain(|_, _| false);
    }

    /// The longest wait for a connection (`database.acquire_timeout_ms`): also the bound of the
    /// waits built on it (a coalesced statement, a worker's claim).
    pub fn acquire_timeout(&self) -> Duration {
        self.threads.wait
    }

    /// How the pools are used right now, summed over the shared pool and every thread's pool
    /// (for the metrics).
    pub fn usage(&self) -> PoolUsage {
        let mut usage = PoolUsage::default();
        for status in
            std::iter::once(self.shared.status()).chain(self.threads.pools.iter().map(|(_, pool)| pool.status()))
        {
            usage.max += status.max_size;
            usage.open += status.size;
            usage.idle += status.available;
            usage.waiting += status.waiting;
        }
        usage
    }

    /// Whether the database answers a trivial query within [`Db::acquire_timeout`] (a
    /// connection and the query's answer together): a frozen server, or a paused PgBouncer,
    /// keeps an open connection's socket and never replies.
    pub async fn ping(&self) -> bool {
        let wait = self.threads.wait;
        let query = async {
            match self.conn().await {
                Ok(mut c) => diesel::sql_query("SELECT 1").execute(&mut c).await.is_ok(),
                Err(_) => false,
            }
        };
        tokio::time::timeout(wait, query).await.unwrap_or(false)
    }

    /// [`Db::ping`] shared by the instance: one probe at a time, whose answer is reused by every
    /// caller for a quarter of [`Db::acquire_timeout`] (callers that arrive while it runs wait
    /// for it). What a request that outlived the bound asks before it is answered 503: many
    /// such requests cost one probe, not one connection each.
    pub async fn answers(&self) -> bool {
        let mut last = self.probe.lock().await;
        if let Some((at, answered)) = *last {
            if at.elapsed() < self.threads.wait / 4 {
                return answered;
            }
        }
        let answered = self.ping().await;
        *last = Some((std::time::Instant::now(), answered));
        answered
    }
}

/// A pool of at most `max_size` connections to `url`, made lazily.
fn pool(
    url: &str,
    max_size: usize,
    wait: Duration,
    statements: Statements,
) -> Result<Pool<AsyncPgConnection>, PoolError> {
    // Fast recycling: a connection handed back out is checked for a broken transaction and
    // a closed socket (which the driver notices as soon as the server closes it, e.g. on a
    // restart), without the default's `SELECT 1`. That ping is a database round trip on
    // every checkout, doubling the round trips of a one-query request (docs/benchmarks.md,
    // "auth"); the price is that a connection silently cut by the network fails the one
    // query that finds out, instead of being replaced before it.
    let mut config = ManagerConfig::default();
    config.recycling_method = RecyclingMethod::Fast;
    if statements == Statements::Unnamed {
        config.custom_setup = Box::new(|url| Box::pin(AsyncPgConnection::establish_with_unnamed_statements(url)));
    }
    let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(url, config);
    Pool::builder(manager)
        .max_size(max_size)
        .wait_timeout(Some(wait))
        .create_timeout(Some(wait))
        .runtime(deadpool_runtime())
        .build()
        .map_err(|e| PoolError::Build(e.to_string()))
}

fn deadpool_runtime() -> deadpool::Runtime {
    deadpool::Runtime::Tokio1
}
