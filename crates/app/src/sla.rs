//! The SLA breach timer inside `wms serve` and `wms dev`: every second it settles the SLAs with a
//! target due (`domain::sla::SlaTimerService`), recording one `sla.breached` per missed target.
//! Any number of instances run it at once: PostgreSQL coordinates them (rows claimed with `SKIP
//! LOCKED`, each breach committed with its event), so a breach is announced exactly once and
//! within the 5 seconds the product promises, across restarts (the timer is the row's `check_at`).

use std::sync::Arc;
use std::time::Duration;

use adapters_postgres::sla::PgSlaTimers;
use adapters_postgres::Db;
use domain::sla::SlaTimerService;
use domain::RepoError;
use tokio::task::JoinHandle;

use crate::platform::SystemClock;

/// How often each instance looks: a breach is announced at most this long after its due time
/// (plus the pass itself).
pub const EVERY: Duration = Duration::from_secs(1);

/// The use case on `db`.
pub fn service(db: &Db) -> SlaTimerService {
    SlaTimerService::new(Arc::new(PgSlaTimers::new(db.clone())), Arc::new(SystemClock))
}

/// One pass (tests drive the timer with it); how many due SLAs it settled.
///
/// # Errors
/// Infrastructure failures only.
pub async fn run_once(db: &Db) -> Result<usize, RepoError> {
    service(db).run_once().await
}

/// Starts the loop; abort the handle to stop it (each batch is its own transaction, so a pass cut
/// short commits nothing half-way).
pub fn start(db: &Db) -> JoinHandle<()> {
    let service = Arc::new(service(db));
    crate::timer_loop::spawn(
        EVERY,
        "sla_breaches",
        move || {
            let service = Arc::clone(&service);
            async move { service.run_once().await }
        },
        |settled| {
            if settled > 0 {
                tracing::debug!(settled, "SLA breach pass");
            }
        },
    )
}
