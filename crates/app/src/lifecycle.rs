//! The lifecycle loop inside `wms serve` and `wms dev`: every second it opens the snoozed threads
//! whose time has come and serves the teams' waiting queues (`domain::threads::LifecycleService`).
//! Any number of instances run it at once: PostgreSQL coordinates them (rows and teams claimed
//! with `SKIP LOCKED`, each change committed with its event), so a snooze ends exactly once and
//! within the 5 seconds the product promises, across restarts (the timer is the row itself).

use std::sync::Arc;
use std::time::Duration;

use adapters_postgres::assignment::PgLifecycleTimers;
use adapters_postgres::Db;
use domain::threads::{LifecyclePass, LifecycleService};
use domain::RepoError;
use tokio::task::JoinHandle;

use crate::platform::SystemClock;

/// How often each instance looks: a due snooze opens, and a waiting thread goes to a member who
/// became eligible, at most this long after (plus the pass itself).
pub const EVERY: Duration = Duration::from_secs(1);

/// The use case on `db`.
pub fn service(db: &Db) -> LifecycleService {
    LifecycleService::new(Arc::new(PgLifecycleTimers::new(db.clone())), Arc::new(SystemClock))
}

/// One pass (tests drive the timers with it).
///
/// # Errors
/// Infrastructure failures only.
pub async fn run_once(db: &Db) -> Result<LifecyclePass, RepoError> {
    service(db).run_once().await
}

/// Starts the loop; abort the handle to stop it (a pass cut short commits nothing it had not
/// committed: each change is its own transaction).
pub fn start(db: &Db) -> JoinHandle<()> {
    let service = Arc::new(service(db));
    crate::timer_loop::spawn(
        EVERY,
        "lifecycle",
        move || {
            let service = Arc::clone(&service);
            async move { service.run_once().await }
        },
        |pass| {
            if pass != LifecyclePass::default() {
                tracing::debug!(reopened = pass.reopened, assigned = pass.assigned, "lifecycle pass");
            }
        },
    )
}
