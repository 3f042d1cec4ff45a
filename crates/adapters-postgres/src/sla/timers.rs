//! The breach timer on PostgreSQL: due SLAs claimed `FOR UPDATE SKIP LOCKED` through the partial
//! index `thread_slas_check_idx`, each batch settled in one transaction with its `sla.breached`
//! events, so a breach is announced once whatever the number of instances, and a restart loses
//! nothing (the timer is the row's `check_at`).

use async_trait::async_trait;
use diesel::sql_types::{BigInt, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::sla::SlaTimers;
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use super::tracking::{announce, on_tick};
use crate::error::repo;
use crate::pool::Db;

/// [`SlaTimers`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgSlaTimers {
    db: Db,
}

impl PgSlaTimers {
    /// The timer on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct DueRow {
    #[diesel(sql_type = BigInt)]
    workspace_id: i64,
    #[diesel(sql_type = BigInt)]
    thread_id: i64,
}

/// The breach timer's claim: due SLAs in due order, rows another instance holds skipped.
pub const SLA_DUE_SQL: &str = "SELECT workspace_id, thread_id FROM thread_slas
     WHERE check_at IS NOT NULL AND check_at <= $1
     ORDER BY check_at LIMIT $2
     FOR UPDATE SKIP LOCKED";

/// Whether the thread's conversation cycle or its row is held by another transaction: a send or a
/// status change that recorded its report fact and is about to settle this very SLA (the cycle),
/// an inbound message or a `PATCH` of the thread (its row, `FOR UPDATE`). Both are locked here
/// when free (never waited for: the row `FOR KEY SHARE`, what the miss's report fact needs of it);
/// when either is held, the timer leaves the thread to a later pass. It holds the SLA row already,
/// which those transactions wait for: waiting for theirs would be the opposite order, a deadlock
/// that cost the send or the callback its answer (500).
const THREAD_HELD_SQL: &str = "WITH cycle AS (
         SELECT thread_id FROM conversation_cycles WHERE thread_id = $1 FOR UPDATE SKIP LOCKED),
     thread AS (SELECT id FROM threads WHERE id = $1 FOR KEY SHARE SKIP LOCKED)
     SELECT (SELECT count(*) FROM conversation_cycles WHERE thread_id = $1) > (SELECT count(*) FROM cycle)
         OR NOT EXISTS (SELECT 1 FROM thread) AS held";

#[derive(QueryableByName)]
struct Held {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    held: bool,
}

#[async_trait]
impl SlaTimers for PgSlaTimers {
    async fn breach_due(&self, now: OffsetDateTime, limit: i64) -> Result<usize, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let (claimed, announced) = conn
            .transaction::<(usize, usize), diesel::result::Error, _>(|conn| {
                async move {
                    let due: Vec<DueRow> = diesel::sql_query(SLA_DUE_SQL)
                        .bind::<Timestamptz, _>(now)
                        .bind::<BigInt, _>(limit)
                        .load(conn)
                        .await?;
                    let mut announced = 0;
                    for row in &due {
                        let thread: Held = diesel::sql_query(THREAD_HELD_SQL)
                            .bind::<BigInt, _>(row.thread_id)
                            .get_result(conn)
                            .await?;
                        if thread.held {
                            continue;
                        }
                        let ws = WorkspaceId(row.workspace_id);
                        let breaches = on_tick(conn, ws, row.thread_id, now).await?;
                        announced += announce(conn, ws, breaches).await?;
                    }
                    Ok((due.len(), announced))
                }
                .scope_boxed()
            })
            .await
            .map_err(repo)?;
        if announced > 0 {
            self.db.wake().events_committed();
        }
        Ok(claimed)
    }
}
