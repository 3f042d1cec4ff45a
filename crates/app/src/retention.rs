//! Deleting audit records older than `audit.retention_days`, beside the webhooks' own pruning:
//! shortly after start, then every ten minutes, on every instance (the `DELETE` is idempotent).

use std::sync::Arc;
use std::time::Duration;

use adapters_postgres::audit::PgAuditRepository;
use adapters_postgres::Db;
use domain::audit::AuditService;
use domain::common::ports::Clock;
use tokio::task::JoinHandle;

use crate::config::Settings;

const FIRST_AFTER: Duration = Duration::from_secs(30);
const EVERY: Duration = Duration::from_secs(600);

/// Deletes the audit records older than `retention_days` before `clock`'s now; returns how many.
///
/// # Errors
/// On database failure.
pub async fn prune_audit(db: &Db, clock: &dyn Clock, retention_days: u32) -> anyhow::Result<u64> {
    let service = AuditService::new(Arc::new(PgAuditRepository::new(db.clone())));
    let before = clock.now() - time::Duration::days(i64::from(retention_days));
    service.prune(before).await.map_err(|e| e.0)
}

/// Starts the periodic pruning; abort the handle to stop it.
pub fn start(settings: &Settings, db: &Db, clock: Arc<dyn Clock>) -> JoinHandle<()> {
    let (db, days) = (db.clone(), settings.audit.retention_days);
    tokio::spawn(async move {
        let mut next = FIRST_AFTER;
        loop {
            tokio::time::sleep(next).await;
            next = EVERY;
            match prune_audit(&db, clock.as_ref(), days).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(rows = n, "pruned old audit records"),
                Err(e) => tracing::warn!(error = format!("{e:#}"), "cannot prune audit records"),
            }
        }
    })
}
