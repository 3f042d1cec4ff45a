//! Reading from a streaming replica while it keeps up (docs/contract.md, "Operations at scale").
//!
//! A [`Replica`] is a pool on the replica and what a watcher ([`Replica::watch`]) last found out
//! about it. The watcher compares, twice a second, the replica's replay position with the
//! primary's recent write positions: the replica's lag is the age of the oldest primary position
//! it has not replayed yet (0 when it has replayed everything the primary had written). While
//! that is under `max_lag` the replica is *in use*: the [`Db`] handles made by
//! [`Db::reading_from`] borrow from it; otherwise (lagging, replay paused, unreachable, shutting
//! down) they borrow from the primary, and go back by themselves once the watcher finds the
//! replica caught up again. The watcher opens a fresh connection each time, so a replica that
//! refuses new connections (a smart shutdown) is out of use at once, and then its idle pooled
//! connections are closed so that the shutdown can finish without failing a request.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel::sql_types::{Bool, Nullable, Text};
use diesel::QueryableByName;
use diesel_async::AsyncPgConnection;

use crate::pool::{Conn, Db, PoolError};

/// What the watcher last found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaState {
    /// Not checked yet: the primary is read from.
    Unknown,
    /// Caught up within the bound: read from.
    InUse,
    /// Behind by the bound or more (or replay paused while the primary writes): not read from.
    Lagging,
    /// Not reachable: not read from.
    Unreachable,
}

impl ReplicaState {
    /// The name `/readyz` and the metrics use.
    pub fn as_str(self) -> &'static str {
        match self {
            ReplicaState::Unknown => "unknown",
            ReplicaState::InUse => "in_use",
            ReplicaState::Lagging => "lagging",
            ReplicaState::Unreachable => "unreachable",
        }
    }

    fn from_u8(v: u8) -> Self {
        match v {
            1 => ReplicaState::InUse,
            2 => ReplicaState::Lagging,
            3 => ReplicaState::Unreachable,
            _ => ReplicaState::Unknown,
        }
    }

    fn to_u8(self) -> u8 {
        match self {
            ReplicaState::Unknown => 0,
            ReplicaState::InUse => 1,
            ReplicaState::Lagging => 2,
            ReplicaState::Unreachable => 3,
        }
    }
}

/// A streaming replica and what is known of its lag.
#[derive(Debug)]
pub struct Replica {
    url: String,
    db: Db,
    max_lag: Duration,
    state: AtomicU8,
    lag_ms: AtomicU64,
}

/// How often the watcher looks.
pub const WATCH_INTERVAL: Duration = Duration::from_millis(500);

impl Replica {
    /// A replica at `url` (pool of at most `max_size` connections, made lazily), read from while
    /// its lag is under `max_lag`. Out of use until [`Replica::watch`] has looked once.
    ///
    /// # Errors
    /// [`PoolError::Build`] when the pool cannot be configured.
    pub fn new(
        url: &str,
        max_size: usize,
        max_lag: Duration,
        statements: crate::Statements,
    ) -> Result<Arc<Self>, PoolError> {
        // A replica that cannot lend a connection quickly is passed over for the primary.
        let db = Db::with_statements(url, max_size, Duration::from_millis(500), statements)?;
        Ok(Arc::new(Self {
            url: url.to_owned(),
            db,
            max_lag,
            state: AtomicU8::new(ReplicaState::Unknown.to_u8()),
            lag_ms: AtomicU64::new(0),
        }))
    }

    /// What the watcher last found.
    pub fn state(&self) -> ReplicaState {
        ReplicaState::from_u8(self.state.load(Ordering::Relaxed))
    }

    /// The lag the watcher last measured, in milliseconds.
    pub fn lag_ms(&self) -> u64 {
        self.lag_ms.load(Ordering::Relaxed)
    }

    /// The bound on the lag.
    pub fn max_lag(&self) -> Duration {
        self.max_lag
    }

    fn set(&self, state: ReplicaState) {
        let before = ReplicaState::from_u8(self.state.swap(state.to_u8(), Ordering::Relaxed));
        if before != state {
            tracing::info!(from = before.as_str(), to = state.as_str(), lag_ms = self.lag_ms(), "read replica");
        }
    }

    /// A connection to the replica when it is in use and lends one; `None` sends the caller to
    /// the primary (and a replica that cannot lend one is out of use until the watcher says
    /// otherwise).
    pub(crate) async fn conn(&self) -> Option<Conn> {
        if self.state() != ReplicaState::InUse {
            return None;
        }
        // Boxed: `Db::conn` is what calls this (the replica's own handle has no replica).
        match Box::pin(self.db.conn()).await {
            Ok(conn) => Some(conn),
            Err(e) => {
                tracing::warn!(error = %e, "read replica unavailable: reading from the primary");
                self.set(ReplicaState::Unreachable);
                None
            }
        }
    }

    /// Watches the replica against `primary` until the runtime stops.
    pub fn watch(self: &Arc<Self>, primary: Db) -> tokio::task::JoinHandle<()> {
        let replica = self.clone();
        tokio::spawn(async move {
            let mut written: VecDeque<(Instant, u64)> = VecDeque::new();
            let mut tick = tokio::time::interval(WATCH_INTERVAL);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                replica.look(&primary, &mut written).await;
            }
        })
    }

    /// One look: the primary's write position, then the replica's replay position.
    async fn look(&self, primary: &Db, written: &mut VecDeque<(Instant, u64)>) {
        // The primary's position first: the replica is compared with a position the primary had
        // reached before the replica was asked.
        if let Some(lsn) = primary_lsn(primary).await {
            if written.back().is_none_or(|(_, last)| *last != lsn) {
                written.push_back((Instant::now(), lsn));
            }
            while written.len() > 10_000 {
                written.pop_front();
            }
        }
        let replayed = match tokio::time::timeout(Duration::from_secs(2), replay_lsn(&self.url)).await {
            Ok(Ok(replayed)) => replayed,
            Ok(Err(e)) => return self.unreachable(&e),
            Err(_) => return self.unreachable("no answer within 2 s"),
        };
        // A promoted replica (not in recovery) has everything it will ever have.
        let lag = match replayed {
            None => Duration::ZERO,
            Some(replayed) => {
                while written.len() > 1 && written.get(1).is_some_and(|(_, lsn)| *lsn <= replayed) {
                    written.pop_front();
                }
                written.iter().find(|(_, lsn)| *lsn > replayed).map_or(Duration::ZERO, |(at, _)| at.elapsed())
            }
        };
        self.lag_ms.store(u64::try_from(lag.as_millis()).unwrap_or(u64::MAX), Ordering::Relaxed);
        self.set(if lag < self.max_lag { ReplicaState::InUse } else { ReplicaState::Lagging });
    }

    fn unreachable(&self, why: impl std::fmt::Display) {
        if self.state() != ReplicaState::Unreachable {
            tracing::warn!(error = %why, "read replica unreachable: reading from the primary");
        }
        self.set(ReplicaState::Unreachable);
        // Idle connections would keep a replica in a smart shutdown from stopping.
        self.db.drop_idle();
    }
}

#[derive(QueryableByName)]
struct Lsn {
    #[diesel(sql_type = Nullable<Text>)]
    lsn: Option<String>,
}

#[derive(QueryableByName)]
struct Replay {
    #[diesel(sql_type = Bool)]
    recovery: bool,
    #[diesel(sql_type = Nullable<Text>)]
    lsn: Option<String>,
}

async fn primary_lsn(primary: &Db) -> Option<u64> {
    use diesel_async::RunQueryDsl;
    let mut conn = primary.conn().await.ok()?;
    let row: Lsn = diesel::sql_query("SELECT pg_current_wal_lsn()::text AS lsn").get_result(&mut conn).await.ok()?;
    row.lsn.as_deref().and_then(parse_lsn)
}

/// The replica's replay position (`None` when it is not in recovery), on a connection of its
/// own: one that cannot be opened means the replica is out of reach or shutting down.
async fn replay_lsn(url: &str) -> Result<Option<u64>, String> {
    use diesel_async::RunQueryDsl;
    // Unnamed: the replica may be reached through a pooler that keeps no prepared statements.
    let mut conn = AsyncPgConnection::establish_with_unnamed_statements(url).await.map_err(|e| e.to_string())?;
    let row: Replay =
        diesel::sql_query("SELECT pg_is_in_recovery() AS recovery, pg_last_wal_replay_lsn()::text AS lsn")
            .get_result(&mut conn)
            .await
            .map_err(|e| e.to_string())?;
    if !row.recovery {
        return Ok(None);
    }
    row.lsn.as_deref().and_then(parse_lsn).map(Some).ok_or_else(|| "no replay position".to_owned())
}

/// `16/B374D848` as a number.
fn parse_lsn(text: &str) -> Option<u64> {
    let (hi, lo) = text.split_once('/')?;
    Some((u64::from_str_radix(hi, 16).ok()? << 32) | u64::from_str_radix(lo, 16).ok()?)
}

#[cfg(test)]
mod tests {
    use super::parse_lsn;

    #[test]
    fn lsns_parse() {
        assert_eq!(parse_lsn("0/0"), Some(0));
        assert_eq!(parse_lsn("16/B374D848"), Some((0x16 << 32) | 0xB374_D848));
        assert_eq!(parse_lsn("nonsense"), None);
    }
}
