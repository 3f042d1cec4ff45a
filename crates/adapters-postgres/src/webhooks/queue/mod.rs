//! [`DeliveryQueue`] on PostgreSQL. Workers of every instance claim due deliveries with
//! `FOR UPDATE SKIP LOCKED` and a lease (`status = 'sending'` until `next_attempt_at`), send them
//! outside any transaction, and write the results in batches. A worker that dies leaves its
//! leases to expire, and the deliveries are claimed again: at least once, never lost.

use std::time::Duration;

use async_trait::async_trait;
use diesel::sql_types::{Array, BigInt, Integer, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::audit::AuditEntry;
use domain::mail::SiteUrl;
use domain::webhooks::controls::DeliveryShift;
use domain::webhooks::delivery::previous_secret_at;
use domain::webhooks::limiter::ManualAdmission;
use domain::webhooks::pace::PaceBounds;
use domain::webhooks::{
    AttemptRecord, AttemptTrigger, ClaimLimits, Claimed, ClaimedDelivery, DeliveryId, DeliveryQueue, DeliveryStatus,
    DestinationId, EventType, ManualAttempt, ManualClaim, WorkSignal,
};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;
use claim::claim_due_tx;
use record::record_tx;

mod claim;
mod record;

/// The delivery queue in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgDeliveryQueue {
    db: Db,
    site: Option<SiteUrl>,
}

impl PgDeliveryQueue {
    /// A queue on `db`.
    pub fn new(db: Db) -> Self {
        Self { db, site: None }
    }

    /// A queue that also e-mails the workspace's admins when a destination starts failing or is
    /// deactivated, with links on `site`.
    pub fn telling_admins(db: Db, site: SiteUrl) -> Self {
        Self { db, site: Some(site) }
    }
}

#[derive(QueryableByName)]
struct ClaimRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    workspace_id: i64,
    #[diesel(sql_type = BigInt)]
    destination_id: i64,
    #[diesel(sql_type = Integer)]
    attempt_count: i32,
    #[diesel(sql_type = Text)]
    url: String,
    #[diesel(sql_type = diesel::sql_types::Bytea)]
    secret: Vec<u8>,
    #[diesel(sql_type = Nullable<diesel::sql_types::Bytea>)]
    previous_secret: Option<Vec<u8>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    previous_until: Option<OffsetDateTime>,
    #[diesel(sql_type = Text)]
    message_id: String,
    #[diesel(sql_type = Text)]
    payload: String,
    #[diesel(sql_type = Text)]
    headers: String,
    #[diesel(sql_type = Nullable<diesel::sql_types::Bytea>)]
    headers_sealed: Option<Vec<u8>>,
}

impl ClaimRow {
    /// The claim made at `now` (when the previous secret still signs).
    fn into_claim(self, trigger: AttemptTrigger, retries_on_failure: bool, now: OffsetDateTime) -> ClaimedDelivery {
        ClaimedDelivery {
            delivery_id: DeliveryId(self.id),
            workspace_id: WorkspaceId(self.workspace_id),
            destination_id: DestinationId(self.destination_id),
            url: self.url,
            message_id: self.message_id,
            payload: self.payload,
            secret_sealed: self.secret,
            previous_secret_sealed: previous_secret_at(self.previous_secret, self.previous_until, now),
            attempt_number: self.attempt_count.saturating_add(1),
            trigger,
            retries_on_failure,
            // Written only from validated headers.
            headers: serde_json::from_str::<std::collections::BTreeMap<String, String>>(&self.headers)
                .map(|h| h.into_iter().collect())
                .unwrap_or_default(),
            headers_sealed: self.headers_sealed,
            window: 0,
        }
    }
}

/// The columns a claim returns, for `UPDATE … FROM webhook_events e, webhook_destinations w`.
const CLAIM_RETURNING: &str = "d.id, d.workspace_id, d.destination_id, d.attempt_count, w.url,
    w.secret_encrypted AS secret,
    w.previous_secret_encrypted AS previous_secret, w.previous_secret_expires_at AS previous_until,
    e.message_id, e.payload, w.headers::text AS headers, w.headers_encrypted AS headers_sealed";

fn ts(now: OffsetDateTime, d: Duration) -> OffsetDateTime {
    now + d
}

/// Applies the domain's [`DeliveryShift`] to the deliveries of `destinations` at `now`.
pub(super) async fn shift(
    conn: &mut AsyncPgConnection,
    destinations: &[i64],
    shift: DeliveryShift,
    now: OffsetDateTime,
) -> diesel::QueryResult<usize> {
    diesel::sql_query(
        "UPDATE webhook_deliveries
         SET status = $3, updated_at = $2, next_attempt_at = coalesce($5, next_attempt_at)
         WHERE destination_id = ANY ($1) AND status = $4",
    )
    .bind::<Array<BigInt>, _>(destinations)
    .bind::<Timestamptz, _>(now)
    .bind::<Text, _>(shift.to.as_str())
    .bind::<Text, _>(shift.from.as_str())
    .bind::<Nullable<Timestamptz>, _>(shift.due_at(now))
    .execute(conn)
    .await
}

#[async_trait]
impl DeliveryQueue for PgDeliveryQueue {
    async fn claim_due(&self, now: OffsetDateTime, max: usize, limits: ClaimLimits) -> Result<Claimed, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        conn.transaction(|conn| claim_due_tx(conn, now, max, limits).scope_boxed()).await.map_err(repo)
    }

    async fn claim_manual(
        &self,
        ws: WorkspaceId,
        destination: DestinationId,
        delivery: DeliveryId,
        now: OffsetDateTime,
        limits: ClaimLimits,
        audit: &AuditEntry,
    ) -> Result<ManualClaim, RepoError> {
        let started = std::time::Instant::now();
        let mut conn = self.db.conn().await.map_err(repo)?;
        let audit = audit.clone();
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                #[derive(QueryableByName)]
                struct Held {
                    #[diesel(sql_type = Text)]
                    status: String,
                    #[diesel(sql_type = Nullable<Timestamptz>)]
                    next_attempt_at: Option<OffsetDateTime>,
                }
                // Locked, so that a worker's claim and this one take turns.
                let held: Option<Held> = diesel::sql_query(
                    "SELECT status, next_attempt_at FROM webhook_deliveries \
                     WHERE id = $1 AND workspace_id = $2 AND destination_id = $3 FOR UPDATE",
                )
                .bind::<BigInt, _>(delivery.0)
                .bind::<BigInt, _>(ws.0)
                .bind::<BigInt, _>(destination.0)
                .get_result(conn)
                .await
                .optional_row()?;
                let Some(held) = held else { return Ok(ManualClaim::NotFound) };
                let status = held
                    .status
                    .parse::<DeliveryStatus>()
                    .map_err(|e| diesel::result::Error::DeserializationError(e.message.into()))?;
                let on_schedule = match status.manual_attempt(held.next_attempt_at, now) {
                    ManualAttempt::InProgress => return Ok(ManualClaim::InProgress),
                    ManualAttempt::Claim { on_schedule } => on_schedule,
                };
                let throttle = match claim::admit_manual_tx(conn, destination.0, now, limits).await? {
                    Some(ManualAdmission::Send(throttle)) => throttle,
                    Some(ManualAdmission::Full(full)) => return Ok(ManualClaim::CapReached(full)),
                    None => return Ok(ManualClaim::NotFound),
                };
                let row: ClaimRow = diesel::sql_query(format!(
                    "UPDATE webhook_deliveries d SET status = 'sending', next_attempt_at = $2, updated_at = $3
                     FROM webhook_events e, webhook_destinations w
                     WHERE d.id = $1 AND e.id = d.event_id AND w.id = d.destination_id
                     RETURNING {CLAIM_RETURNING}"
                ))
                .bind::<BigInt, _>(delivery.0)
                .bind::<Timestamptz, _>(ts(now, limits.lease))
                .bind::<Timestamptz, _>(now)
                .get_result(conn)
                .await?;
                // The record goes with the claim: a claim that rolls back leaves none.
                crate::audit::write(conn, std::slice::from_ref(&audit), None).await?;
                claim::count_manual_send(conn, destination.0, throttle, now, started).await?;
                Ok(ManualClaim::Claimed(Box::new(row.into_claim(AttemptTrigger::Manual, on_schedule, now))))
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }

    async fn create_test(
        &self,
        ws: WorkspaceId,
        destination: DestinationId,
        event: EventType,
        payload: &str,
        now: OffsetDateTime,
        limits: ClaimLimits,
        audit: &AuditEntry,
    ) -> Result<ManualClaim, RepoError> {
        let started = std::time::Instant::now();
        let mut conn = self.db.conn().await.map_err(repo)?;
        let (payload, mut audit) = (payload.to_owned(), audit.clone());
        let claim: ManualClaim = conn
            .transaction::<_, diesel::result::Error, _>(|conn| {
                async move {
                    #[derive(QueryableByName)]
                    struct Held {
                        #[diesel(sql_type = BigInt)]
                        id: i64,
                    }
                    // Held until commit, so the destination cannot go between its sample and its
                    // delivery; another workspace's destination is simply not found.
                    let held: Option<Held> = diesel::sql_query(
                        "SELECT id FROM webhook_destinations WHERE workspace_id = $1 AND id = $2 FOR KEY SHARE",
                    )
                    .bind::<BigInt, _>(ws.0)
                    .bind::<BigInt, _>(destination.0)
                    .get_result(conn)
                    .await
                    .optional_row()?;
                    let Some(Held { id: destination }) = held else { return Ok(ManualClaim::NotFound) };
                    let throttle = match claim::admit_manual_tx(conn, destination, now, limits).await? {
                        Some(ManualAdmission::Send(throttle)) => throttle,
                        Some(ManualAdmission::Full(full)) => return Ok(ManualClaim::CapReached(full)),
                        None => return Ok(ManualClaim::NotFound),
                    };
                    let event_id = crate::webhooks::outbox::record_sample(conn, ws, event, &payload).await?;
                    let row: Option<ClaimRow> = diesel::sql_query(
                        "WITH w AS (
                             SELECT * FROM webhook_destinations WHERE workspace_id = $1 AND id = $2
                         ), e AS (
                             SELECT id, message_id, payload FROM webhook_events WHERE workspace_id = $1 AND id = $4
                         ), d AS (
                             INSERT INTO webhook_deliveries (workspace_id, destination_id, event_id, status,
                                                             next_attempt_at, created_at, updated_at)
                             SELECT $1, w.id, e.id, 'sending', $5, $3, $3 FROM w, e
                             RETURNING id, workspace_id, destination_id, attempt_count
                         )
                         SELECT d.id, d.workspace_id, d.destination_id, d.attempt_count, w.url,
                                w.secret_encrypted AS secret,
                                w.previous_secret_encrypted AS previous_secret,
                                w.previous_secret_expires_at AS previous_until,
                                e.message_id, e.payload, w.headers::text AS headers,
                                w.headers_encrypted AS headers_sealed
                         FROM d, w, e",
                    )
                    .bind::<BigInt, _>(ws.0)
                    .bind::<BigInt, _>(destination)
                    .bind::<Timestamptz, _>(now)
                    .bind::<BigInt, _>(event_id)
                    .bind::<Timestamptz, _>(ts(now, limits.lease))
                    .get_result(conn)
                    .await
                    .optional_row()?;
                    // The destination is held above, so its delivery is always made; were it not,
                    // the sample must not stay behind: roll back.
                    let Some(row) = row else { return Err(diesel::result::Error::NotFound) };
                    if let Some(details) = audit.details.as_object_mut() {
                        details.insert("delivery_id".to_owned(), row.id.into());
                    }
                    crate::audit::write(conn, std::slice::from_ref(&audit), None).await?;
                    claim::count_manual_send(conn, destination, throttle, now, started).await?;
                    Ok(ManualClaim::Claimed(Box::new(row.into_claim(AttemptTrigger::Test, false, now))))
                }
                .scope_boxed()
            })
            .await
            .map_err(repo)?;
        Ok(claim)
    }

    async fn record(
        &self,
        records: &[AttemptRecord],
        auto_disable_after: Duration,
        bounds: PaceBounds,
    ) -> Result<(), RepoError> {
        if records.is_empty() {
            return Ok(());
        }
        let mut conn = self.db.conn().await.map_err(repo)?;
        let paces = conn
            .transaction(|conn| record_tx(conn, records, auto_disable_after, bounds, self.site.as_ref()).scope_boxed())
            .await
            .map_err(repo)?;
        crate::webhooks::pace::publish(&paces, bounds);
        for r in records {
            metrics::counter!(DELIVERIES, "outcome" => outcome(r.status)).increment(1);
        }
        Ok(())
    }

    async fn renew(&self, deliveries: &[DeliveryId], until: OffsetDateTime) -> Result<(), RepoError> {
        if deliveries.is_empty() {
            return Ok(());
        }
        let ids: Vec<i64> = deliveries.iter().map(|d| d.0).collect();
        let mut conn = self.db.conn().await.map_err(repo)?;
        // Never shortens a lease (a manual claim's is longer); a finished delivery is left alone.
        diesel::sql_query(
            "UPDATE webhook_deliveries SET next_attempt_at = $2
             WHERE id = ANY ($1) AND status = 'sending' AND next_attempt_at < $2",
        )
        .bind::<Array<BigInt>, _>(&ids)
        .bind::<Timestamptz, _>(until)
        .execute(&mut conn)
        .await
        .map_err(repo)?;
        Ok(())
    }

    fn new_events(&self) -> Box<dyn WorkSignal> {
        Box::new(self.db.wake().events())
    }

    async fn prune(&self, before: OffsetDateTime) -> Result<u64, RepoError> {
        const BATCH: i64 = 5000;
        let mut conn = self.db.conn().await.map_err(repo)?;
        let mut total = 0u64;
        for sql in [
            "DELETE FROM webhook_attempts WHERE id IN (
                 SELECT id FROM webhook_attempts WHERE attempted_at < $1 LIMIT $2)",
            "DELETE FROM webhook_deliveries WHERE id IN (
                 SELECT id FROM webhook_deliveries
                 WHERE status IN ('succeeded', 'failed') AND updated_at < $1 LIMIT $2)",
            "DELETE FROM webhook_events WHERE id IN (
                 SELECT e.id FROM webhook_events e
                 WHERE e.created_at < $1 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
                 LIMIT $2)",
        ] {
            loop {
                let n = diesel::sql_query(sql)
                    .bind::<Timestamptz, _>(before)
                    .bind::<BigInt, _>(BATCH)
                    .execute(&mut conn)
                    .await
                    .map_err(repo)?;
                total += n as u64;
                if (n as i64) < BATCH {
                    break;
                }
            }
        }
        Ok(total)
    }
}

/// `Ok(None)` for "no row", like diesel's `optional()` for `sql_query`.
trait OptionalRow<T> {
    fn optional_row(self) -> diesel::QueryResult<Option<T>>;
}

impl<T> OptionalRow<T> for diesel::QueryResult<T> {
    fn optional_row(self) -> diesel::QueryResult<Option<T>> {
        match self {
            Ok(v) => Ok(Some(v)),
            Err(diesel::result::Error::NotFound) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Delivery attempts recorded, by `outcome`: what the attempt left its delivery as
/// (`succeeded`, `retrying`: another attempt is scheduled, `failed`: no more attempts).
pub const DELIVERIES: &str = "wms_webhook_deliveries_total";

/// The outcome label of an attempt that left its delivery in `status`.
fn outcome(status: DeliveryStatus) -> &'static str {
    match status {
        DeliveryStatus::Succeeded => "succeeded",
        DeliveryStatus::Pending | DeliveryStatus::Sending => "retrying",
        DeliveryStatus::Failed => "failed",
        DeliveryStatus::Paused => "paused",
    }
}
