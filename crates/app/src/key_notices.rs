//! The API keys' expiry notices (seven days and one day before a key expires): a loop on every
//! instance looks for due notices every [`EVERY`], so each mail is queued within about that long
//! of its moment (the contract allows 30 seconds). Instances never handle one key's notice twice:
//! the store locks the keys it handles (`SKIP LOCKED`) and records each notice in the transaction
//! that queues its mails (`domain::api_keys::ExpiryNoticeStore`).

use std::sync::Arc;
use std::time::Duration;

use adapters_postgres::key_notices::PgExpiryNotices;
use adapters_postgres::Db;
use domain::api_keys::ExpiryNoticesService;
use domain::common::ports::Clock;
use tokio::task::JoinHandle;

use crate::config::Settings;

/// How often due notices are looked for.
pub const EVERY: Duration = Duration::from_secs(10);

/// The service on `db`, with mails linking to the site of `settings`.
pub fn service(settings: &Settings, db: &Db, clock: Arc<dyn Clock>) -> ExpiryNoticesService {
    ExpiryNoticesService::new(Arc::new(PgExpiryNotices::new(db.clone(), crate::mail::site_url(settings))), clock)
}

/// Starts the loop; abort the handle to stop it (a pass in flight is one transaction per batch, so
/// stopping never leaves a notice half handled).
pub fn start(settings: &Settings, db: &Db, clock: Arc<dyn Clock>) -> JoinHandle<()> {
    start_every(service(settings, db, clock), EVERY)
}

/// The loop of `service`, a pass every `every`.
pub fn start_every(service: ExpiryNoticesService, every: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            match service.handle_due().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(keys = n, "API key expiry notices handled"),
                Err(e) => tracing::warn!(error = format!("{:#}", e.0), "cannot handle API key expiry notices"),
            }
            tokio::time::sleep(every).await;
        }
    })
}
