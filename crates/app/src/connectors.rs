//! The channel dispatchers: loops inside `wms serve` and `wms dev` that send queued outbound
//! messages through the platforms. Any number of instances share the queue safely (the claim is
//! `FOR UPDATE SKIP LOCKED` with a lease).

use std::sync::Arc;
use std::time::Duration;

use adapters_outbound::meta::MetaGateway;
use adapters_postgres::connectors::PgConnectors;
use adapters_postgres::Db;
use domain::channels::ChannelType;
use domain::connectors::{
    AccountProof, ChannelCredentials, ChannelGateway, DispatchReport, DispatchService, ProofError,
};
use domain::webhooks::WorkSignal;
use domain::RepoError;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::Settings;
use crate::platform::SystemClock;

/// The least time between two claims of one loop woken by commits.
const MIN_GAP: Duration = Duration::from_millis(5);

/// The platforms' send API as configured.
///
/// # Errors
/// When the HTTP client cannot be built.
pub fn gateway(settings: &Settings) -> anyhow::Result<Arc<dyn ChannelGateway>> {
    let c = &settings.connectors;
    Ok(Arc::new(MetaGateway::new(&c.graph_base_url, &c.graph_version, Duration::from_secs(c.timeout_secs))?))
}

/// The proof of control of a platform account, on the configured Graph API. The platform's answer
/// is awaited at most `connectors.timeout_secs` (and 10 s at most: someone waits for the request).
pub fn account_proof(settings: &Settings) -> Arc<dyn AccountProof> {
    let c = &settings.connectors;
    let timeout = Duration::from_secs(c.timeout_secs.min(10));
    match MetaGateway::new(&c.graph_base_url, &c.graph_version, timeout) {
        Ok(g) => Arc::new(g),
        Err(e) => {
            tracing::error!(error = %e, "no HTTP client for the Graph API: channels cannot be given credentials");
            Arc::new(NoPlatform)
        }
    }
}

/// Stands in when no HTTP client could be built: every proof is "cannot tell".
struct NoPlatform;

#[async_trait::async_trait]
impl AccountProof for NoPlatform {
    async fn prove(&self, _: ChannelType, _: &ChannelCredentials) -> Result<(), ProofError> {
        Err(ProofError::Unreachable("the platform cannot be reached".into()))
    }
}

/// The dispatcher's use case on `db`, sending through `gateway`.
pub fn dispatcher(settings: &Settings, db: &Db, gateway: Arc<dyn ChannelGateway>) -> DispatchService {
    DispatchService::new(
        Arc::new(PgConnectors::new(db.clone())),
        gateway,
        crate::secrets::wired_cipher(settings),
        Arc::new(SystemClock),
    )
}

/// One dispatch pass over due messages (tests drive sending with it).
///
/// # Errors
/// Infrastructure failures of the queue.
pub async fn run_once(
    settings: &Settings,
    db: &Db,
    gateway: Arc<dyn ChannelGateway>,
) -> Result<DispatchReport, RepoError> {
    dispatcher(settings, db, gateway).dispatch(settings.connectors.batch_size).await
}

/// The running dispatchers of this instance.
#[derive(Debug)]
pub struct Dispatchers {
    shutdown: watch::Sender<bool>,
    loops: Vec<JoinHandle<()>>,
}

/// Starts `connectors.workers` dispatch loops.
///
/// # Errors
/// When the platform HTTP client cannot be built.
pub fn start(settings: &Settings, db: &Db) -> anyhow::Result<Dispatchers> {
    let service = dispatcher(settings, db, gateway(settings)?);
    let (shutdown, rx) = watch::channel(false);
    let c = &settings.connectors;
    let loops = (0..c.workers)
        .map(|_| {
            tokio::spawn(run(
                service.clone(),
                PgConnectors::new(db.clone()).new_outbound(),
                c.batch_size,
                Duration::from_millis(c.poll_interval_ms),
                rx.clone(),
            ))
        })
        .collect::<Vec<_>>();
    if !loops.is_empty() {
        tracing::info!(workers = loops.len(), graph = %c.graph_base_url, "channel dispatchers started");
    }
    Ok(Dispatchers { shutdown, loops })
}

impl Dispatchers {
    /// Stops claiming and lets sends in flight finish within `grace`; a message still in flight
    /// after that is taken again when its lease expires.
    pub async fn stop(self, grace: Duration) {
        let _ = self.shutdown.send(true);
        let deadline = tokio::time::Instant::now() + grace;
        for l in self.loops {
            let _ = tokio::time::timeout_at(deadline, l).await;
        }
    }
}

/// `queued` wakes the loop on sends committed in this instance; the poll is for other instances'.
async fn run(
    service: DispatchService,
    mut queued: adapters_postgres::wake::Signal,
    batch: i64,
    poll: Duration,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut idle = poll;
    loop {
        if *shutdown.borrow() {
            return;
        }
        let claimed_at = tokio::time::Instant::now();
        match service.dispatch(batch).await {
            // A full batch: there may be more right away.
            Ok(r) if r.claimed as i64 == batch => {
                idle = poll;
                continue;
            }
            Ok(r) => {
                if r.claimed > 0 {
                    tracing::debug!(sent = r.sent, failed = r.failed, deferred = r.deferred, "dispatched");
                }
                idle = poll;
            }
            Err(e) => {
                tracing::warn!(error = format!("{:#}", e.0), "dispatcher cannot reach the queue; backing off");
                idle = (idle * 2).min(Duration::from_secs(30));
            }
        }
        let backing_off = idle > poll;
        tokio::select! {
            () = tokio::time::sleep(idle) => {}
            () = queued.changed(), if !backing_off => {
                // At most one claim per loop per interval however many sends commit.
                tokio::time::sleep_until(claimed_at + MIN_GAP).await;
            }
            _ = shutdown.changed() => return,
        }
    }
}
