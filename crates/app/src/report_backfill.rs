//! The reports' backfill inside `wms serve` and `wms dev`: once at start, the threads whose
//! messages were stored before the conversation reports recorded figures are replayed into them
//! (`adapters_postgres::reports::backfill`), in the background, batch by batch. Several instances
//! share the work (batches claimed with `SKIP LOCKED`); one stopped half-way leaves the rest
//! noted for the next start.

use adapters_postgres::Db;
use tokio::task::JoinHandle;

/// Starts the backfill; abort the handle to stop it (each batch is its own transaction).
pub fn start(db: &Db) -> JoinHandle<()> {
    let db = db.clone();
    tokio::spawn(async move {
        match adapters_postgres::reports::backfill::run(&db, None).await {
            Ok(0) => {}
            Ok(threads) => tracing::info!(threads, "conversation reports backfilled"),
            Err(e) => tracing::error!(
                error = format!("{e:#}"),
                "conversation reports backfill stopped: it resumes at the next start"
            ),
        }
    })
}
