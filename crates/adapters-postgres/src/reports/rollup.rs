//! The rollup worker's storage side: facts queued in `conversation_facts_pending` by their insert
//! (a statement trigger, so a send adds no statement and shares no row with another send) are
//! folded into `conversation_rollups` after their transaction commits, batch by batch, by the SQL
//! function `conversation_rollups_fold` (migration `2026-11-30-000101_conversation_rollups`): one
//! upsert per touched rollup row per batch, and the batch's queue rows deleted in the same
//! transaction. Batches are claimed with `FOR UPDATE SKIP LOCKED`, so any number of instances share
//! the queue; a batch cut short rolls back and stays queued. A report reads the rollup and the
//! facts still queued in one snapshot, so its figures never depend on how far the worker is.

use diesel::sql_types::Integer;
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::RepoError;

use crate::error::repo;
use crate::pool::Db;

/// Facts folded per transaction: large enough that a busy minute's facts share their rollup rows'
/// upserts, small enough that a batch holds its locks for a fraction of a second.
pub const BATCH: i32 = 5_000;

#[derive(QueryableByName)]
struct Folded {
    #[diesel(sql_type = Integer)]
    n: i32,
}

/// Folds one batch of queued facts in the caller's transaction; how many left the queue.
///
/// # Errors
/// Database errors.
pub async fn fold_batch(conn: &mut AsyncPgConnection, batch: i32) -> diesel::QueryResult<usize> {
    let folded: Folded = diesel::sql_query("SELECT conversation_rollups_fold($1) AS n")
        .bind::<Integer, _>(batch)
        .get_result(conn)
        .await?;
    Ok(usize::try_from(folded.n).unwrap_or(0))
}

/// Folds the queue, batch after batch, until a batch finds fewer than [`BATCH`] facts it can fold
/// (the rest is queued after this call began, or held by another instance or by a thread being
/// relabelled or deleted). Returns how many facts this call folded.
///
/// # Errors
/// Database errors (the batch in hand rolls back and stays queued).
pub async fn fold(db: &Db) -> Result<usize, RepoError> {
    let mut conn = db.conn().await.map_err(repo)?;
    let mut done = 0;
    loop {
        let n = conn
            .transaction::<_, diesel::result::Error, _>(|c| fold_batch(c, BATCH).scope_boxed())
            .await
            .map_err(repo)?;
        done += n;
        if n < BATCH as usize {
            return Ok(done);
        }
    }
}
