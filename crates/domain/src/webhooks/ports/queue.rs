//! The delivery queue in storage, shared by every instance: claims, attempts and their limits.

use std::time::Duration;

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::audit::AuditEntry;
use crate::common::error::RepoError;
use crate::webhooks::event_type::EventType;
use crate::webhooks::limiter::CapReached;
use crate::webhooks::model::{AttemptTrigger, DeliveryId, DeliveryStatus, DestinationId};
use crate::webhooks::pace::{PaceBounds, PaceSignal};
use crate::workspace::WorkspaceId;

/// A delivery taken by one worker for one attempt, with everything needed to send it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedDelivery {
    /// The delivery.
    pub delivery_id: DeliveryId,
    /// Its workspace.
    pub workspace_id: WorkspaceId,
    /// Its destination.
    pub destination_id: DestinationId,
    /// Where to send it.
    pub url: String,
    /// The `webhook-id`.
    pub message_id: String,
    /// The exact body.
    pub payload: String,
    /// The sealed current secret.
    pub secret_sealed: Vec<u8>,
    /// The sealed previous secret, only while it still signs.
    pub previous_secret_sealed: Option<Vec<u8>>,
    /// The number this attempt gets.
    pub attempt_number: i32,
    /// Why it is made.
    pub trigger: AttemptTrigger,
    /// Whether a failure schedules the next retry (false for one-off manual and test attempts
    /// on deliveries that had finished).
    pub retries_on_failure: bool,
    /// The destination's static headers as stored in the clear: names with blank values, or the
    /// values themselves on a row written before they were sealed and not yet sealed since.
    pub headers: Vec<(String, String)>,
    /// The static header values, sealed; when present they are what is sent.
    pub headers_sealed: Option<Vec<u8>>,
    /// The deliveries to its destination in flight once the claim that took it sent its own,
    /// itself included; 0 when no claim took it (a manual attempt). What the pace learns from a
    /// refusal ([`crate::webhooks::pace::PaceSample::window`]).
    pub window: u32,
}

/// The per-destination limits that claiming enforces, across every instance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClaimLimits {
    /// How long a manual or test claim lasts (it is not renewed: longer than the timeout).
    pub lease: Duration,
    /// How long a worker's claim lasts unless renewed; the worker renews it while it works, so a
    /// worker that dies leaves its claims to expire after this.
    pub claim_lease: Duration,
    /// Upper bound of the deliveries in flight to one destination at once.
    pub max_in_flight: u32,
    /// Upper bound of the deliveries per second to one destination.
    pub rate_per_sec: f64,
}

impl ClaimLimits {
    /// The bounds of every destination's adaptive pace.
    pub fn bounds(&self) -> PaceBounds {
        PaceBounds { max_in_flight: self.max_in_flight, rate: self.rate_per_sec }
    }
}

/// A manual attempt's claim (a retry of a delivery, or a test send's new delivery), or why it could
/// not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManualClaim {
    /// Claimed for an attempt now.
    Claimed(Box<ClaimedDelivery>),
    /// No such delivery of this destination (no such destination, for a test send).
    NotFound,
    /// A worker is attempting it right now (never for a test send).
    InProgress,
    /// A cap of the destination's own is full ([`admit_manual`](crate::webhooks::limiter::admit_manual)); nothing was changed.
    CapReached(CapReached),
}

/// What an attempt did to its destination's health.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DestinationEffect {
    /// 2xx: the destination is healthy; the failure clock stops.
    Healthy,
    /// A failure: the failure clock starts (if not running) and may deactivate the destination.
    Failing,
    /// 410: deactivate now.
    Gone,
}

/// The outcome of one attempt, to be written to the log and the delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    /// The delivery.
    pub delivery_id: DeliveryId,
    /// Its workspace.
    pub workspace_id: WorkspaceId,
    /// Its destination.
    pub destination_id: DestinationId,
    /// 1 for the first attempt.
    pub attempt_number: i32,
    /// Why it was made.
    pub trigger: AttemptTrigger,
    /// When it started.
    pub attempted_at: OffsetDateTime,
    /// The HTTP status, when there was an answer.
    pub status_code: Option<u16>,
    /// The transport error, when there was none.
    pub error: Option<String>,
    /// Duration in milliseconds.
    pub duration_ms: i64,
    /// The start of the answer's body.
    pub response_excerpt: String,
    /// The next attempt, when one is scheduled.
    pub next_attempt_at: Option<OffsetDateTime>,
    /// The delivery's new status: succeeded, pending (retry scheduled) or failed.
    pub status: DeliveryStatus,
    /// What it means for the destination.
    pub effect: DestinationEffect,
    /// What it says about the receiver's load.
    pub pace: PaceSignal,
    /// Its claim's window ([`ClaimedDelivery::window`]).
    pub window: u32,
}

/// A worker's wake-up: resolves when work may have been added since it last resolved (a
/// wake-up that came while the worker was busy is kept; several are one). Workers still poll,
/// for work that other instances add.
#[async_trait]
pub trait WorkSignal: Send {
    /// Waits for the next wake-up.
    async fn changed(&mut self);
}

/// A signal that never wakes: for queues that can only be polled.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSignal;

#[async_trait]
impl WorkSignal for NoSignal {
    async fn changed(&mut self) {
        std::future::pending::<()>().await;
    }
}

/// What one claim took, and when the queue next has something due.
#[derive(Debug, Clone, Default)]
pub struct Claimed {
    /// The deliveries claimed, to send now.
    pub deliveries: Vec<ClaimedDelivery>,
    /// The soonest time after the claim's `now` at which a delivery comes due (a retry, one held
    /// back by the rate, a lease running out), when the claim took less than it could: the
    /// dispatcher looks again then if that is sooner than its poll, so a destination held to its
    /// rate is sent to as soon as the rate allows, not up to a poll later.
    pub next_due: Option<OffsetDateTime>,
}

/// The delivery queue in storage, shared by every instance.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait DeliveryQueue: Send + Sync {
    /// Claims up to `max` due deliveries of active destinations, respecting each destination's
    /// in-flight and rate limits: never more for a destination than it has room for (the others
    /// stay due and untouched, and do not block other destinations' deliveries that are due);
    /// deliveries held back by the rate are rescheduled when the rate allows them.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn claim_due(&self, now: OffsetDateTime, max: usize, limits: ClaimLimits) -> Result<Claimed, RepoError>;

    /// Claims one delivery for a manual redelivery now, whatever its status (unless a worker
    /// holds it), with `limits.lease`, when [`admit_manual`](crate::webhooks::limiter::admit_manual) lets it go under the destination's
    /// own caps (counted in its throttle, under the throttle's lock like a worker's claim), and
    /// stores `audit` in the claim's transaction (nothing when not claimed).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn claim_manual(
        &self,
        ws: WorkspaceId,
        destination: DestinationId,
        delivery: DeliveryId,
        now: OffsetDateTime,
        limits: ClaimLimits,
        audit: &AuditEntry,
    ) -> Result<ManualClaim, RepoError>;

    /// Records a sample event of type `event` (`webhook.test` or a typed sample) with one
    /// delivery to `destination`, claimed for an attempt now under the destination's own caps as
    /// [`DeliveryQueue::claim_manual`] does ([`ManualClaim::NotFound`] when the destination does
    /// not exist; nothing is recorded unless claimed). Samples are never in the events feed and
    /// never replayed. `audit` is stored in the same transaction, with the new delivery's id added
    /// to its details as `delivery_id`.
    ///
    /// # Errors
    /// Infrastructure failures only.
    #[allow(clippy::too_many_arguments)]
    async fn create_test(
        &self,
        ws: WorkspaceId,
        destination: DestinationId,
        event: EventType,
        payload: &str,
        now: OffsetDateTime,
        limits: ClaimLimits,
        audit: &AuditEntry,
    ) -> Result<ManualClaim, RepoError>;

    /// Writes attempts: the log rows, the deliveries' new state and the destinations' health
    /// (410 and `auto_disable_after` of failures deactivate, with a note).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn record(
        &self,
        records: &[AttemptRecord],
        auto_disable_after: Duration,
        bounds: PaceBounds,
    ) -> Result<(), RepoError>;

    /// Extends the leases of `deliveries` still being sent to `until` (the heartbeat of the
    /// worker that holds them).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn renew(&self, deliveries: &[DeliveryId], until: OffsetDateTime) -> Result<(), RepoError>;

    /// Deletes attempts, finished deliveries and their events older than `before`, in batches;
    /// returns how many rows went.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn prune(&self, before: OffsetDateTime) -> Result<u64, RepoError>;

    /// A wake-up for one delivery loop: when events are committed in this process.
    fn new_events(&self) -> Box<dyn WorkSignal> {
        Box::new(NoSignal)
    }
}
