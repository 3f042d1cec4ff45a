//! The channel dispatchers: loops inside `wms serve` and `wms dev` that send queued outbound
//! messages through the platforms. Any number of instances share the queue safely (the claim is
//! `FOR UPDATE SKIP LOCKED` with a lease).

use std::sync::Arc;
use std::time::Duration;

use adapters_outbound::meta::MetaGateway;
use adapters_postgres::connectors::PgConnectors;
use adapters_postgres::Db;
use domain::channels::ChannelType;
use domain::connectors::template_sync::TemplatesService;
use domain::connectors::templates::{TemplateSource, WhatsappTemplate};
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

/// The template catalogue's use cases on `db`, reading Meta's templates from the configured Graph
/// API (at most 10 s per page: a member may wait for a sync).
pub fn templates(settings: &Settings, db: &Db) -> Arc<TemplatesService> {
    let c = &settings.connectors;
    let source: Arc<dyn TemplateSource> =
        match MetaGateway::new(&c.graph_base_url, &c.graph_version, Duration::from_secs(c.timeout_secs.min(10))) {
            Ok(g) => Arc::new(g),
            Err(e) => {
                tracing::error!(error = %e, "no HTTP client for the Graph API: templates cannot be synced");
                Arc::new(NoPlatform)
            }
        };
    Arc::new(TemplatesService::new(
        Arc::new(adapters_postgres::templates::PgTemplates::new(db.clone())),
        source,
        crate::secrets::wired_cipher(settings),
        Arc::new(SystemClock),
    ))
}

#[async_trait::async_trait]
impl TemplateSource for NoPlatform {
    async fn fetch(&self, _: &ChannelCredentials) -> Result<Vec<WhatsappTemplate>, String> {
        Err("the platform cannot be reached".into())
    }
}

/// How often the template sync loop looks for channels due (new credentials are due at once).
const TEMPLATE_POLL: Duration = Duration::from_secs(5);

/// Channels one pass of the template sync loop takes.
const TEMPLATE_BATCH: i64 = 20;

/// Syncs due template catalogues until shutdown: every channel every
/// `connectors.template_sync_minutes`, and those given new credentials at its next pass. Any
/// number of instances share the work (each channel is claimed by one).
async fn sync_templates(service: Arc<TemplatesService>, every_secs: i64, mut shutdown: watch::Receiver<bool>) {
    loop {
        if *shutdown.borrow() {
            return;
        }
        let mut pause = TEMPLATE_POLL;
        match service.sync_due(every_secs, TEMPLATE_BATCH).await {
            Ok(n) if n > 0 => tracing::debug!(channels = n, "template catalogues synced"),
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = format!("{:#}", e.0), "template sync cannot reach the database; backing off");
                pause = Duration::from_secs(30);
            }
        }
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            _ = shutdown.changed() => return,
        }
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
    let mut loops = loops;
    if !loops.is_empty() {
        tracing::info!(workers = loops.len(), graph = %c.graph_base_url, "channel dispatchers started");
        // An instance that talks to the platforms also keeps the template catalogues fresh.
        let every = i64::try_from(c.template_sync_minutes * 60).unwrap_or(i64::MAX);
        loops.push(tokio::spawn(sync_templates(templates(settings, db), every, rx.clone())));
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
