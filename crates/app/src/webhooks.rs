//! Wiring of outbound webhooks: the service behind the API, and the delivery workers that run
//! inside `wms serve` and `wms dev`.
//!
//! Each instance runs `webhooks.workers` dispatch loops that claim due deliveries from the
//! database (`FOR UPDATE SKIP LOCKED`, with a lease), send them concurrently (at most
//! `webhooks.concurrency` requests in flight per instance) and hand the results to one recorder
//! that writes them in batches. Instances share nothing but the database. docs/webhooks.md has
//! the whole design.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use adapters_outbound::webhooks::{HttpWebhookTransport, SystemResolver};
use adapters_postgres::webhooks::{PgDeliveryQueue, PgWebhookRepository};
use adapters_postgres::Db;
use async_trait::async_trait;
use domain::common::ports::Clock;
use domain::webhooks::delivery::{DeliveryEngine, DeliveryPolicy};
use domain::webhooks::retry::{RetryAfterBounds, RetrySchedule};
use domain::webhooks::ssrf::AddressPolicy;
use domain::webhooks::{
    AttemptRecord, ClaimLimits, DeliveryId, OutboundRequest, TransportOutcome, WebhookService, WebhookTransport,
    WorkSignal,
};
use domain::RepoError;
use tokio::sync::{mpsc, watch, Notify, Semaphore};
use tokio::task::JoinHandle;

use crate::config::{parse_retry_schedule, Settings};
use crate::platform::{OsRandom, SystemClock};

/// Deliveries claimed by one loop at a time.
const CLAIM_BATCH: usize = 100;
/// Results written in one transaction at most.
const RECORD_BATCH: usize = 500;
/// How soon a loop that found work looks again.
const BUSY_POLL: Duration = Duration::from_millis(10);
/// The least time between two claims of one loop woken by commits, so that a stream of small
/// commits costs at most one claim per loop per interval, not one per commit.
const MIN_GAP: Duration = Duration::from_millis(5);
/// How often old attempts are pruned.
const PRUNE_EVERY: Duration = Duration::from_secs(600);

/// The addresses destinations may have.
pub fn address_policy(settings: &Settings) -> AddressPolicy {
    // Validated when the settings were loaded.
    AddressPolicy::from_setting(settings.webhooks.allowed_subnets.as_deref()).unwrap_or_default()
}

/// The delivery rules from the settings.
pub fn delivery_policy(settings: &Settings) -> DeliveryPolicy {
    let w = &settings.webhooks;
    let schedule = parse_retry_schedule(&w.retry_schedule)
        .map(|v| RetrySchedule::new(v.into_iter().map(Duration::from_secs).collect()))
        .unwrap_or_else(RetrySchedule::standard);
    DeliveryPolicy {
        schedule,
        retry_after: RetryAfterBounds {
            min: Duration::from_secs(1),
            max: Duration::from_secs(w.retry_after_max_secs.max(1)),
        },
        auto_disable_after: Duration::from_secs(w.auto_disable_after_hours * 3600),
        limits: ClaimLimits {
            lease: Duration::from_secs(w.lease_secs),
            claim_lease: Duration::from_secs(w.claim_lease_secs),
            max_in_flight: w.max_in_flight_per_destination,
            rate_per_sec: w.rate_per_destination,
        },
    }
}

/// A transport that cannot send, used only if the HTTP client cannot be built.
struct BrokenTransport(String);

#[async_trait]
impl WebhookTransport for BrokenTransport {
    async fn send(&self, _request: OutboundRequest) -> TransportOutcome {
        TransportOutcome {
            status: None,
            retry_after: None,
            excerpt: String::new(),
            error: Some(format!("the HTTP client is unavailable: {}", self.0)),
            duration: Duration::ZERO,
            overloaded: false,
        }
    }
}

/// The delivery engine on `db` with `clock` (the system clock in production; tests inject one).
pub fn engine(settings: &Settings, db: &Db, clock: Arc<dyn Clock>) -> Arc<DeliveryEngine> {
    let transport: Arc<dyn WebhookTransport> = match HttpWebhookTransport::new(
        address_policy(settings),
        Duration::from_secs(settings.webhooks.timeout_secs),
    ) {
        Ok(t) => Arc::new(t),
        Err(e) => {
            tracing::error!(error = %e, "cannot build the webhook HTTP client");
            Arc::new(BrokenTransport(e.to_string()))
        }
    };
    let cipher = crate::secrets::wired_cipher(settings);
    Arc::new(DeliveryEngine {
        queue: Arc::new(PgDeliveryQueue::telling_admins(db.clone(), crate::mail::site_url(settings))),
        transport,
        cipher,
        clock,
        random: Arc::new(OsRandom),
        policy: delivery_policy(settings),
    })
}

/// Seals the static header values that rows written before they were sealed still hold in the
/// clear (docs/secrets.md); `wms serve` runs it at start, before its workers. A failure is logged
/// and leaves those values in the clear, where deliveries still read them.
pub async fn seal_plain_headers(settings: &Settings, db: &Db) {
    let cipher = crate::secrets::wired_cipher(settings);
    match adapters_postgres::sealed::seal_plain_headers(db, cipher.as_ref()).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(destinations = n, "sealed the static headers stored in the clear"),
        Err(e) => tracing::error!(error = format!("{e:#}"), "static headers stored in the clear were not sealed"),
    }
}

/// The service behind `/v1/webhooks` and the settings API.
pub fn service(settings: &Settings, db: &Db) -> Arc<WebhookService> {
    Arc::new(WebhookService {
        repo: Arc::new(PgWebhookRepository::new(db.clone())),
        resolver: Arc::new(SystemResolver),
        engine: engine(settings, db, Arc::new(SystemClock)),
        addresses: address_policy(settings),
    })
}

/// Claims due deliveries once, sends them all and records the results; the number sent. For
/// tests that drive the clock themselves.
///
/// # Errors
/// When the queue cannot be read or written.
pub async fn run_once(engine: &DeliveryEngine, max: usize) -> Result<usize, RepoError> {
    let claims = engine.queue.claim_due(engine.clock.now(), max, engine.policy.limits).await?.deliveries;
    let records = futures_util::future::join_all(claims.iter().map(|c| engine.attempt(c))).await;
    engine.queue.record(&records, engine.policy.auto_disable_after, engine.policy.limits.bounds()).await?;
    Ok(records.len())
}

/// The running delivery workers of this instance.
pub struct Workers {
    shutdown: watch::Sender<bool>,
    loops: Vec<JoinHandle<()>>,
    recorder: Option<JoinHandle<()>>,
    heartbeat: JoinHandle<()>,
    pruner: JoinHandle<()>,
    in_flight: Arc<Semaphore>,
    concurrency: u32,
}

impl std::fmt::Debug for Workers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workers").field("loops", &self.loops.len()).finish_non_exhaustive()
    }
}

/// Starts the workers (none when `webhooks.workers` is 0).
pub fn start(settings: &Settings, engine: Arc<DeliveryEngine>) -> Workers {
    let w = &settings.webhooks;
    let concurrency = u32::try_from(w.concurrency).unwrap_or(u32::MAX);
    let (shutdown, shutdown_rx) = watch::channel(false);
    let (tx, rx) = mpsc::unbounded_channel::<AttemptRecord>();
    let in_flight = Arc::new(Semaphore::new(w.concurrency));
    let wake = Arc::new(Notify::new());
    // Results written free destinations' slots: the recorder wakes the loops.
    let (recorded, recorded_rx) = watch::channel(());
    let poll = Duration::from_millis(w.poll_interval_ms);
    let held = Held::default();
    let loops = (0..w.workers)
        .map(|_| {
            tokio::spawn(dispatch(
                engine.clone(),
                in_flight.clone(),
                Wakes { slot: wake.clone(), recorded: recorded_rx.clone(), events: engine.queue.new_events() },
                tx.clone(),
                shutdown_rx.clone(),
                poll,
                held.clone(),
            ))
        })
        .collect();
    drop(tx);
    let recorder = Some(tokio::spawn(record(engine.clone(), rx, recorded, held.clone())));
    let heartbeat = tokio::spawn(heartbeat(engine.clone(), held));
    let retention = Duration::from_secs(w.retention_days * 86400);
    let pruner = tokio::spawn(prune(engine, retention, shutdown_rx));
    if w.workers > 0 {
        tracing::info!(workers = w.workers, concurrency = w.concurrency, "webhook delivery workers started");
    }
    Workers { shutdown, loops, recorder, heartbeat, pruner, in_flight, concurrency }
}

impl Workers {
    /// Stops claiming, lets requests in flight finish and their results be written, within
    /// `grace`. Whatever is still in flight after it is sent again once its lease expires.
    pub async fn stop(mut self, grace: Duration) {
        let _ = self.shutdown.send(true);
        let deadline = tokio::time::Instant::now() + grace;
        for l in self.loops.drain(..) {
            let _ = tokio::time::timeout_at(deadline, l).await;
        }
        let drained = tokio::time::timeout_at(deadline, self.in_flight.acquire_many(self.concurrency)).await;
        if drained.is_err() {
            tracing::warn!("webhook deliveries still in flight at shutdown; they will be sent again after their lease");
        }
        if let Some(r) = self.recorder.take() {
            let _ = tokio::time::timeout_at(deadline + Duration::from_secs(5), r).await;
        }
        self.heartbeat.abort();
        self.pruner.abort();
        tracing::info!("webhook delivery workers stopped");
    }
}

/// What wakes a delivery loop before its next poll.
struct Wakes {
    /// A request of this instance finished (a permit is free again).
    slot: Arc<Notify>,
    /// The recorder wrote results: their destinations have free slots.
    recorded: watch::Receiver<()>,
    /// Events were committed in this instance.
    events: Box<dyn WorkSignal>,
}

async fn dispatch(
    engine: Arc<DeliveryEngine>,
    in_flight: Arc<Semaphore>,
    mut wakes: Wakes,
    results: mpsc::UnboundedSender<AttemptRecord>,
    mut shutdown: watch::Receiver<bool>,
    poll: Duration,
    held: Held,
) {
    let mut failures = 0u32;
    loop {
        if *shutdown.borrow() {
            return;
        }
        let claimed_at = tokio::time::Instant::now();
        let room = in_flight.available_permits().min(CLAIM_BATCH);
        let mut full = false;
        let mut busy = false;
        let mut next_due = None;
        if room > 0 {
            let now = engine.clock.now();
            match engine.queue.claim_due(now, room, engine.policy.limits).await {
                Ok(claimed) => {
                    failures = 0;
                    let claims = claimed.deliveries;
                    full = claims.len() == room;
                    busy = !claims.is_empty();
                    next_due = claimed.next_due.map(|at| Duration::try_from(at - now).unwrap_or_default());
                    held.add(claims.iter().map(|c| c.delivery_id));
                    for claim in claims {
                        let Ok(permit) = in_flight.clone().acquire_owned().await else { return };
                        let (engine, results, wake) = (engine.clone(), results.clone(), wakes.slot.clone());
                        tokio::spawn(async move {
                            let record = engine.attempt(&claim).await;
                            let _ = results.send(record);
                            drop(permit);
                            wake.notify_one();
                        });
                    }
                }
                Err(e) => {
                    failures += 1;
                    tracing::error!(error = %e.0, "cannot claim webhook deliveries");
                }
            }
        }
        if full {
            continue;
        }
        // While events keep coming, look again soon: small batches keep the commit-to-receiver
        // latency low and stay under the per-destination in-flight limit. Idle, poll slowly
        // (for other instances' events): this instance's commits and results wake the loop.
        let pause = if failures > 0 {
            (poll * 2u32.pow(failures.min(6))).min(Duration::from_secs(10))
        } else if busy {
            poll.min(BUSY_POLL)
        } else {
            // A delivery coming due before the next poll (one held back by its destination's
            // rate, a retry) is claimed when it does; at most one claim per `MIN_GAP` still.
            next_due.map_or(poll, |d| poll.min(d.max(MIN_GAP)))
        };
        let woken = tokio::select! {
            () = tokio::time::sleep(pause) => false,
            () = wakes.slot.notified(), if room == 0 => true,
            _ = wakes.recorded.changed(), if failures == 0 => true,
            () = wakes.events.changed(), if failures == 0 => true,
            _ = shutdown.changed() => false,
        };
        if woken {
            tokio::time::sleep_until(claimed_at + MIN_GAP).await;
        }
    }
}

async fn record(
    engine: Arc<DeliveryEngine>,
    mut rx: mpsc::UnboundedReceiver<AttemptRecord>,
    recorded: watch::Sender<()>,
    held: Held,
) {
    let mut batch = Vec::with_capacity(RECORD_BATCH);
    while let Some(first) = rx.recv().await {
        batch.push(first);
        // Whatever arrived while the previous batch was being written goes in this one.
        while batch.len() < RECORD_BATCH {
            match rx.try_recv() {
                Ok(r) => batch.push(r),
                Err(_) => break,
            }
        }
        let mut delay = Duration::from_millis(100);
        for attempt in 1..=5 {
            match engine.queue.record(&batch, engine.policy.auto_disable_after, engine.policy.limits.bounds()).await {
                Ok(()) => {
                    recorded.send_modify(|()| {});
                    break;
                }
                Err(e) if attempt < 5 => {
                    tracing::warn!(error = %e.0, attempt, "cannot record webhook attempts yet");
                    tokio::time::sleep(delay).await;
                    delay *= 3;
                }
                Err(e) => {
                    // The deliveries stay leased and are sent again when the lease expires.
                    tracing::error!(error = %e.0, lost = batch.len(), "cannot record webhook attempts");
                }
            }
        }
        // Written (or given up: the leases then expire and the deliveries are sent again).
        held.remove(batch.iter().map(|r| r.delivery_id));
        batch.clear();
    }
}

/// The deliveries this instance has claimed and not yet recorded: their leases are renewed.
#[derive(Clone, Default)]
struct Held(Arc<std::sync::Mutex<HashSet<DeliveryId>>>);

impl Held {
    fn add(&self, ids: impl Iterator<Item = DeliveryId>) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend(ids);
    }

    fn remove(&self, ids: impl Iterator<Item = DeliveryId>) {
        let mut held = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for id in ids {
            held.remove(&id);
        }
    }

    fn snapshot(&self) -> Vec<DeliveryId> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter().copied().collect()
    }
}

/// Keeps this instance's claims alive while it works on them: every third of the claim lease,
/// their leases are extended to a full one from now. An instance that dies stops renewing, so its
/// deliveries are claimed again within one claim lease (`webhooks.claim_lease_secs`), not after
/// the request timeout.
async fn heartbeat(engine: Arc<DeliveryEngine>, held: Held) {
    let lease = engine.policy.limits.claim_lease;
    let every = lease / 3;
    loop {
        tokio::time::sleep(every).await;
        let ids = held.snapshot();
        if ids.is_empty() {
            continue;
        }
        if let Err(e) = engine.queue.renew(&ids, engine.clock.now() + lease).await {
            tracing::warn!(error = %e.0, held = ids.len(), "cannot renew webhook delivery leases");
        }
    }
}

async fn prune(engine: Arc<DeliveryEngine>, retention: Duration, mut shutdown: watch::Receiver<bool>) {
    let mut next = Duration::from_secs(30);
    loop {
        tokio::select! {
            _ = tokio::time::sleep(next) => {}
            _ = shutdown.changed() => return,
        }
        next = PRUNE_EVERY;
        match engine.queue.prune(engine.clock.now() - retention).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(rows = n, "pruned old webhook deliveries"),
            Err(e) => tracing::warn!(error = %e.0, "cannot prune webhook deliveries"),
        }
    }
}
