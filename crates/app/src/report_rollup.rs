//! The reports' rollup worker inside `wms serve` and `wms dev`: every second it finishes the
//! refiguring a change of business hours left (`adapters_postgres::business_hours::
//! refigure_pending`), then folds the conversation facts committed since into
//! `conversation_rollups` (`adapters_postgres::reports::rollup`), so a report reads a few rollup
//! rows instead of every fact of its period. Any number of instances run it at once (batches claimed with `SKIP
//! LOCKED`); the queue is a table, so a restart resumes where it stopped. Reports stay exact
//! however far behind it is: they read the facts still queued beside the rollup.

use std::time::Duration;

use adapters_postgres::Db;
use domain::RepoError;
use tokio::task::JoinHandle;

/// How often each instance folds the queue.
pub const EVERY: Duration = Duration::from_secs(1);

/// One pass (tests drive the worker with it): refigures what changes of business hours left, then
/// folds until the queue is empty or held by others; how many facts it folded.
///
/// # Errors
/// Infrastructure failures only.
pub async fn run_once(db: &Db) -> Result<usize, RepoError> {
    adapters_postgres::business_hours::refigure_pending(db).await?;
    adapters_postgres::reports::rollup::fold(db).await
}

/// Starts the loop; abort the handle to stop it (each batch is its own transaction, so a pass cut
/// short commits nothing half-way).
pub fn start(db: &Db) -> JoinHandle<()> {
    let db = db.clone();
    crate::timer_loop::spawn(
        EVERY,
        "report_rollup",
        move || {
            let db = db.clone();
            async move { run_once(&db).await }
        },
        |folded| {
            if folded > 0 {
                tracing::debug!(folded, "report rollup pass");
            }
        },
    )
}
