//! [`DeliveryQueue`] on PostgreSQL. Workers of every instance claim due deliveries with
//! `FOR UPDATE SKIP LOCKED` and a lease (`status = 'sending'` until `next_attempt_at`), send them
//! outside any transaction, and write the results in batches. A worker that dies leaves its
//! leases to expire, and the deliveries are claimed again: at least once, never lost.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use async_trait::async_trait;
use diesel::sql_types::{Array, BigInt, Bool, Double, Integer, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::webhooks::retry::should_deactivate;
use domain::webhooks::{
    AttemptRecord, AttemptTrigger, ClaimLimits, ClaimedDelivery, DeliveryId, DeliveryQueue, DeliveryStatus,
    DestinationEffect, DestinationId, EventType, ManualClaim, WorkSignal,
};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;

/// The delivery queue in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgDeliveryQueue {
    db: Db,
}

impl PgDeliveryQueue {
    /// A queue on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct Candidate {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    destination_id: i64,
}

#[derive(QueryableByName)]
struct InFlight {
    #[diesel(sql_type = BigInt)]
    destination_id: i64,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Bucket {
    #[diesel(sql_type = BigInt)]
    destination_id: i64,
    #[diesel(sql_type = Double)]
    tokens: f64,
    #[diesel(sql_type = Timestamptz)]
    refilled_at: OffsetDateTime,
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
    #[diesel(sql_type = Text)]
    message_id: String,
    #[diesel(sql_type = Text)]
    payload: String,
    #[diesel(sql_type = Text)]
    old_status: String,
}

impl ClaimRow {
    fn into_claim(self, trigger: AttemptTrigger, retries_on_failure: bool) -> ClaimedDelivery {
        ClaimedDelivery {
            delivery_id: DeliveryId(self.id),
            workspace_id: WorkspaceId(self.workspace_id),
            destination_id: DestinationId(self.destination_id),
            url: self.url,
            message_id: self.message_id,
            payload: self.payload,
            secret_sealed: self.secret,
            previous_secret_sealed: self.previous_secret,
            attempt_number: self.attempt_count.saturating_add(1),
            trigger,
            retries_on_failure,
        }
    }
}

#[derive(QueryableByName)]
struct Health {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    failing_since: Option<OffsetDateTime>,
    #[diesel(sql_type = Bool)]
    active: bool,
}

/// The columns a claim returns, for `UPDATE … FROM webhook_events e, webhook_destinations w`.
const CLAIM_RETURNING: &str = "d.id, d.workspace_id, d.destination_id, d.attempt_count, w.url,
    w.secret_encrypted AS secret,
    CASE WHEN w.previous_secret_expires_at > $3 THEN w.previous_secret_encrypted END AS previous_secret,
    e.message_id, e.payload";

fn ts(now: OffsetDateTime, d: Duration) -> OffsetDateTime {
    now + d
}

/// What the limits allow for the candidates of one claim: who is sent now, who waits until when
/// (held back by the rate), and each destination's remaining tokens. A candidate held back only
/// because its destination has no free slot is in neither list: it stays due and untouched, and
/// is claimed as soon as a slot frees (writing it back "for later" cost a statement per claim and
/// delayed it by a guessed backoff; issue 21).
struct Allotment {
    claimed: Vec<i64>,
    deferred: Vec<(i64, OffsetDateTime)>,
    tokens: Vec<(i64, f64)>,
}

/// How many due deliveries (oldest first) a claim looks through to find each destination's
/// oldest ones. Deliveries beyond it are seen once the older ones are sent.
const CLAIM_SCAN: i64 = 2000;

fn allot(
    candidates: &[Candidate],
    in_flight: &HashMap<i64, i64>,
    buckets: &HashMap<i64, (f64, OffsetDateTime)>,
    limits: ClaimLimits,
    now: OffsetDateTime,
) -> Allotment {
    struct State {
        slots: i64,
        tokens: f64,
        rate_waiting: u32,
    }
    let mut states: BTreeMap<i64, State> = BTreeMap::new();
    let mut out = Allotment { claimed: Vec::new(), deferred: Vec::new(), tokens: Vec::new() };
    for c in candidates {
        let s = states.entry(c.destination_id).or_insert_with(|| {
            let (tokens, at) = buckets.get(&c.destination_id).copied().unwrap_or((limits.burst, now));
            let elapsed = (now - at).as_seconds_f64().max(0.0);
            State {
                slots: i64::from(limits.max_in_flight) - in_flight.get(&c.destination_id).copied().unwrap_or(0),
                tokens: (tokens + elapsed * limits.rate_per_sec).min(limits.burst),
                rate_waiting: 0,
            }
        });
        if s.slots > 0 && s.tokens >= 1.0 {
            s.slots -= 1;
            s.tokens -= 1.0;
            out.claimed.push(c.id);
        } else if s.tokens < 1.0 {
            // Spread the waiting ones at the sustained rate, so they come due one token apart.
            let wait = (1.0 - s.tokens + f64::from(s.rate_waiting)) / limits.rate_per_sec.max(0.001);
            s.rate_waiting += 1;
            out.deferred.push((c.id, now + Duration::from_secs_f64(wait.min(3600.0))));
        }
        // Else: no free slot. Left due, untouched.
    }
    out.tokens = states.into_iter().map(|(id, s)| (id, s.tokens)).collect();
    out
}

async fn claim_due_tx(
    conn: &mut AsyncPgConnection,
    now: OffsetDateTime,
    max: usize,
    limits: ClaimLimits,
) -> diesel::QueryResult<Vec<ClaimedDelivery>> {
    // At most `max_in_flight` per destination (no destination can take more at once), the oldest
    // first: a destination with a backlog does not fill the claim with deliveries it has no room
    // for, and the other destinations' due deliveries behind them are claimed too.
    let candidates: Vec<Candidate> = diesel::sql_query(
        "SELECT d.id, d.destination_id FROM webhook_deliveries d
         JOIN (
             SELECT s.id, s.next_attempt_at,
                    row_number() OVER (PARTITION BY s.destination_id ORDER BY s.next_attempt_at, s.id) AS rn
             FROM (
                 SELECT id, destination_id, next_attempt_at FROM webhook_deliveries
                 WHERE status IN ('pending', 'sending') AND next_attempt_at <= $1
                 ORDER BY next_attempt_at
                 LIMIT $3
             ) s
         ) r ON r.id = d.id
         WHERE r.rn <= $4 AND d.status IN ('pending', 'sending') AND d.next_attempt_at <= $1
         ORDER BY r.next_attempt_at, d.id
         LIMIT $2
         FOR UPDATE OF d SKIP LOCKED",
    )
    .bind::<Timestamptz, _>(now)
    .bind::<BigInt, _>(i64::try_from(max).unwrap_or(i64::MAX))
    .bind::<BigInt, _>(CLAIM_SCAN)
    .bind::<BigInt, _>(i64::from(limits.max_in_flight.max(1)))
    .load(conn)
    .await?;
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let mut dests: Vec<i64> = candidates.iter().map(|c| c.destination_id).collect();
    dests.sort_unstable();
    dests.dedup();

    diesel::sql_query(
        "INSERT INTO webhook_throttles (destination_id, tokens, refilled_at)
         SELECT u.dest, $2, $3 FROM unnest($1::bigint[]) AS u(dest)
         WHERE EXISTS (SELECT 1 FROM webhook_destinations w WHERE w.id = u.dest)
         ON CONFLICT DO NOTHING",
    )
    .bind::<Array<BigInt>, _>(&dests)
    .bind::<Double, _>(limits.burst)
    .bind::<Timestamptz, _>(now)
    .execute(conn)
    .await?;
    // Locked in id order, so instances claiming for the same destinations cannot deadlock.
    let buckets: HashMap<i64, (f64, OffsetDateTime)> = diesel::sql_query(
        "SELECT destination_id, tokens, refilled_at FROM webhook_throttles
         WHERE destination_id = ANY ($1) ORDER BY destination_id FOR UPDATE",
    )
    .bind::<Array<BigInt>, _>(&dests)
    .load::<Bucket>(conn)
    .await?
    .into_iter()
    .map(|b| (b.destination_id, (b.tokens, b.refilled_at)))
    .collect();

    // Counted only now, under the buckets' locks: an instance claiming for the same destination
    // at the same time has committed its claims by then, so both cannot fill the same slots.
    let in_flight: HashMap<i64, i64> = diesel::sql_query(
        "SELECT destination_id, count(*) AS n FROM webhook_deliveries
         WHERE destination_id = ANY ($1) AND status = 'sending' AND next_attempt_at > $2
         GROUP BY destination_id",
    )
    .bind::<Array<BigInt>, _>(&dests)
    .bind::<Timestamptz, _>(now)
    .load::<InFlight>(conn)
    .await?
    .into_iter()
    .map(|r| (r.destination_id, r.n))
    .collect();

    let allotment = allot(&candidates, &in_flight, &buckets, limits, now);

    let (ids, tokens): (Vec<i64>, Vec<f64>) = allotment.tokens.iter().copied().unzip();
    diesel::sql_query(
        "UPDATE webhook_throttles t SET tokens = v.tokens, refilled_at = $3
         FROM unnest($1::bigint[], $2::float8[]) AS v(id, tokens) WHERE t.destination_id = v.id",
    )
    .bind::<Array<BigInt>, _>(&ids)
    .bind::<Array<Double>, _>(&tokens)
    .bind::<Timestamptz, _>(now)
    .execute(conn)
    .await?;

    if !allotment.deferred.is_empty() {
        let (ids, at): (Vec<i64>, Vec<OffsetDateTime>) = allotment.deferred.iter().copied().unzip();
        diesel::sql_query(
            "UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = v.at
             FROM unnest($1::bigint[], $2::timestamptz[]) AS v(id, at) WHERE d.id = v.id",
        )
        .bind::<Array<BigInt>, _>(&ids)
        .bind::<Array<Timestamptz>, _>(&at)
        .execute(conn)
        .await?;
    }
    if allotment.claimed.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<ClaimRow> = diesel::sql_query(format!(
        "UPDATE webhook_deliveries d SET status = 'sending', next_attempt_at = $2, updated_at = $3
         FROM webhook_events e, webhook_destinations w
         WHERE d.id = ANY ($1) AND e.id = d.event_id AND w.id = d.destination_id AND w.active
         RETURNING {CLAIM_RETURNING}, 'pending' AS old_status"
    ))
    .bind::<Array<BigInt>, _>(&allotment.claimed)
    .bind::<Timestamptz, _>(ts(now, limits.lease))
    .bind::<Timestamptz, _>(now)
    .load(conn)
    .await?;
    if rows.len() < allotment.claimed.len() {
        // The others belong to destinations deactivated since their event: park them.
        diesel::sql_query(
            "UPDATE webhook_deliveries SET status = 'paused', updated_at = $2
             WHERE id = ANY ($1) AND status IN ('pending', 'sending')",
        )
        .bind::<Array<BigInt>, _>(
            allotment.claimed.iter().copied().filter(|id| !rows.iter().any(|r| r.id == *id)).collect::<Vec<_>>(),
        )
        .bind::<Timestamptz, _>(now)
        .execute(conn)
        .await?;
    }
    Ok(rows.into_iter().map(|r| r.into_claim(AttemptTrigger::Scheduled, true)).collect())
}

/// Parks the pending deliveries of deactivated destinations (they resume on reactivation).
pub(super) async fn pause_pending(
    conn: &mut AsyncPgConnection,
    destinations: &[i64],
    now: OffsetDateTime,
) -> diesel::QueryResult<usize> {
    diesel::sql_query(
        "UPDATE webhook_deliveries SET status = 'paused', updated_at = $2
         WHERE destination_id = ANY ($1) AND status = 'pending'",
    )
    .bind::<Array<BigInt>, _>(destinations)
    .bind::<Timestamptz, _>(now)
    .execute(conn)
    .await
}

/// Per destination: whether the batch ends healthy, when its failures began, and 410s.
#[derive(Default)]
struct Verdicts {
    healthy: Vec<i64>,
    failing: Vec<(i64, OffsetDateTime, bool, OffsetDateTime)>,
    gone: Vec<(i64, OffsetDateTime)>,
}

fn verdicts(records: &[AttemptRecord]) -> Verdicts {
    let mut sorted: Vec<&AttemptRecord> = records.iter().collect();
    sorted.sort_by_key(|r| r.attempted_at);
    // (reset seen, first failure after the last success, last attempt time, gone at)
    let mut per: BTreeMap<i64, (bool, Option<OffsetDateTime>, OffsetDateTime, Option<OffsetDateTime>)> =
        BTreeMap::new();
    for r in sorted {
        let e = per.entry(r.destination_id.0).or_insert((false, None, r.attempted_at, None));
        e.2 = r.attempted_at;
        match r.effect {
            DestinationEffect::Healthy => {
                e.0 = true;
                e.1 = None;
            }
            DestinationEffect::Failing => {
                e.1.get_or_insert(r.attempted_at);
            }
            DestinationEffect::Gone => {
                e.1.get_or_insert(r.attempted_at);
                e.3 = Some(r.attempted_at);
            }
        }
    }
    let mut v = Verdicts::default();
    for (id, (reset, first_failure, last, gone)) in per {
        match first_failure {
            None => v.healthy.push(id),
            Some(first) => v.failing.push((id, first, reset, last)),
        }
        if let Some(at) = gone {
            v.gone.push((id, at));
        }
    }
    v
}

fn rfc3339(t: OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

#[derive(QueryableByName)]
struct Disabled {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

async fn record_tx(
    conn: &mut AsyncPgConnection,
    records: &[AttemptRecord],
    auto_disable_after: Duration,
) -> diesel::QueryResult<()> {
    let col = |f: &dyn Fn(&AttemptRecord) -> i64| records.iter().map(f).collect::<Vec<i64>>();
    let ws = col(&|r| r.workspace_id.0);
    let ids = col(&|r| r.delivery_id.0);
    let numbers: Vec<i32> = records.iter().map(|r| r.attempt_number).collect();
    let triggers: Vec<&str> = records.iter().map(|r| r.trigger.as_str()).collect();
    let at: Vec<OffsetDateTime> = records.iter().map(|r| r.attempted_at).collect();
    let codes: Vec<Option<i32>> = records.iter().map(|r| r.status_code.map(i32::from)).collect();
    let errors: Vec<Option<String>> = records
        .iter()
        .map(|r| r.error.clone().or_else(|| r.status_code.is_none().then(|| "no answer".to_owned())))
        .collect();
    let durations: Vec<i32> = records.iter().map(|r| i32::try_from(r.duration_ms).unwrap_or(i32::MAX)).collect();
    let excerpts: Vec<&str> = records.iter().map(|r| r.response_excerpt.as_str()).collect();
    let next: Vec<Option<OffsetDateTime>> = records.iter().map(|r| r.next_attempt_at).collect();
    let statuses: Vec<&str> = records.iter().map(|r| r.status.as_str()).collect();

    // Only for deliveries that still exist (their destination may have been deleted meanwhile).
    diesel::sql_query(
        "INSERT INTO webhook_attempts (workspace_id, delivery_id, attempt_number, trigger, attempted_at,
             status_code, error, duration_ms, response_excerpt, next_attempt_at)
         SELECT v.ws, v.id, v.n, v.trigger, v.at, v.code, v.err, v.dur, v.excerpt, v.next
         FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::text[], $5::timestamptz[], $6::int[], $7::text[],
                     $8::int[], $9::text[], $10::timestamptz[])
              AS v(ws, id, n, trigger, at, code, err, dur, excerpt, next)
         WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = v.id)",
    )
    .bind::<Array<BigInt>, _>(&ws)
    .bind::<Array<BigInt>, _>(&ids)
    .bind::<Array<Integer>, _>(&numbers)
    .bind::<Array<Text>, _>(&triggers)
    .bind::<Array<Timestamptz>, _>(&at)
    .bind::<Array<Nullable<Integer>>, _>(&codes)
    .bind::<Array<Nullable<Text>>, _>(&errors)
    .bind::<Array<Integer>, _>(&durations)
    .bind::<Array<Text>, _>(&excerpts)
    .bind::<Array<Nullable<Timestamptz>>, _>(&next)
    .execute(conn)
    .await?;

    // A stale result (a lease that expired and was claimed again) never overwrites a newer one.
    diesel::sql_query(
        "UPDATE webhook_deliveries d SET
             status = CASE WHEN v.status = 'pending' AND NOT w.active THEN 'paused' ELSE v.status END,
             attempt_count = v.n, next_attempt_at = v.next, last_attempt_at = v.at, updated_at = v.at
         FROM unnest($1::bigint[], $2::text[], $3::int[], $4::timestamptz[], $5::timestamptz[])
              AS v(id, status, n, next, at),
              webhook_destinations w
         WHERE d.id = v.id AND w.id = d.destination_id AND d.attempt_count < v.n",
    )
    .bind::<Array<BigInt>, _>(&ids)
    .bind::<Array<Text>, _>(&statuses)
    .bind::<Array<Integer>, _>(&numbers)
    .bind::<Array<Nullable<Timestamptz>>, _>(&next)
    .bind::<Array<Timestamptz>, _>(&at)
    .execute(conn)
    .await?;

    let v = verdicts(records);
    let mut touched: Vec<i64> = v.failing.iter().map(|f| f.0).collect();
    touched.sort_unstable();
    // Destination rows are locked in id order before any update, so concurrent recorders of
    // several instances cannot deadlock; healthy destinations are only touched if they had failed.
    diesel::sql_query(
        "SELECT id FROM webhook_destinations
         WHERE (id = ANY ($1) AND failing_since IS NOT NULL) OR id = ANY ($2)
         ORDER BY id FOR UPDATE",
    )
    .bind::<Array<BigInt>, _>(&v.healthy)
    .bind::<Array<BigInt>, _>(&touched)
    .execute(conn)
    .await?;
    if !v.healthy.is_empty() {
        diesel::sql_query(
            "UPDATE webhook_destinations SET failing_since = NULL WHERE id = ANY ($1) AND failing_since IS NOT NULL",
        )
        .bind::<Array<BigInt>, _>(&v.healthy)
        .execute(conn)
        .await?;
    }
    let mut disable: Vec<(i64, String, OffsetDateTime)> = v
        .gone
        .iter()
        .map(|(id, at)| (*id, format!("the endpoint answered 410 Gone at {}", rfc3339(*at)), *at))
        .collect();
    if !v.failing.is_empty() {
        let ids: Vec<i64> = v.failing.iter().map(|f| f.0).collect();
        let firsts: Vec<OffsetDateTime> = v.failing.iter().map(|f| f.1).collect();
        let resets: Vec<bool> = v.failing.iter().map(|f| f.2).collect();
        let health: Vec<Health> = diesel::sql_query(
            "UPDATE webhook_destinations w
             SET failing_since = CASE WHEN v.reset THEN v.first ELSE coalesce(w.failing_since, v.first) END
             FROM unnest($1::bigint[], $2::timestamptz[], $3::bool[]) AS v(id, first, reset)
             WHERE w.id = v.id
             RETURNING w.id, w.failing_since, w.active",
        )
        .bind::<Array<BigInt>, _>(&ids)
        .bind::<Array<Timestamptz>, _>(&firsts)
        .bind::<Array<Bool>, _>(&resets)
        .load(conn)
        .await?;
        for h in health {
            let last = v.failing.iter().find(|f| f.0 == h.id).map(|f| f.3);
            if let (true, Some(since), Some(now)) = (h.active, h.failing_since, last) {
                if should_deactivate(since, now, auto_disable_after) && !disable.iter().any(|d| d.0 == h.id) {
                    let days = auto_disable_after.as_secs_f64() / 86400.0;
                    disable.push((
                        h.id,
                        format!("every delivery failed for {days} days (since {})", rfc3339(since)),
                        now,
                    ));
                }
            }
        }
    }
    if !disable.is_empty() {
        let ids: Vec<i64> = disable.iter().map(|d| d.0).collect();
        let reasons: Vec<&str> = disable.iter().map(|d| d.1.as_str()).collect();
        let at: Vec<OffsetDateTime> = disable.iter().map(|d| d.2).collect();
        // Each deactivation is recorded in its workspace's audit log, by `system`, in this
        // transaction.
        let disabled: Vec<Disabled> = diesel::sql_query(
            "WITH d AS (
               UPDATE webhook_destinations w
               SET active = false, disabled_reason = v.reason, disabled_at = v.at, updated_at = v.at
               FROM unnest($1::bigint[], $2::text[], $3::timestamptz[]) AS v(id, reason, at)
               WHERE w.id = v.id AND w.active
               RETURNING w.id, w.workspace_id, v.reason
             ), audited AS (
               INSERT INTO audit_events (workspace_id, action, actor_type, actor_label, target_type, target_id, details)
               SELECT d.workspace_id, $4, 'system', 'wms', 'webhook', d.id, jsonb_build_object('reason', d.reason)
               FROM d
             )
             SELECT d.id FROM d",
        )
        .bind::<Array<BigInt>, _>(&ids)
        .bind::<Array<Text>, _>(&reasons)
        .bind::<Array<Timestamptz>, _>(&at)
        .bind::<Text, _>(domain::audit::AuditAction::WebhookDisabled.as_str())
        .load(conn)
        .await?;
        let latest = at.iter().copied().max().unwrap_or_else(OffsetDateTime::now_utc);
        pause_pending(conn, &ids, latest).await?;
        // Issue 16: the workspace's other destinations that subscribe hear of it (this one is
        // inactive now, so the outbox does not queue the event for it), in this transaction.
        let disabled: Vec<i64> = disabled.into_iter().map(|d| d.id).collect();
        for d in super::destinations::load_many(conn, &disabled).await? {
            let at = d.disabled_at.unwrap_or(latest);
            let data = super::destinations::destination_json(&d);
            super::outbox::record_at(conn, d.workspace_id, EventType::WebhookDisabled, &data, at).await?;
        }
        for (id, reason, _) in &disable {
            tracing::warn!(destination_id = id, reason, "webhook destination deactivated");
        }
    }
    Ok(())
}

#[async_trait]
impl DeliveryQueue for PgDeliveryQueue {
    async fn claim_due(
        &self,
        now: OffsetDateTime,
        max: usize,
        limits: ClaimLimits,
    ) -> Result<Vec<ClaimedDelivery>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        conn.transaction(|conn| claim_due_tx(conn, now, max, limits).scope_boxed()).await.map_err(repo)
    }

    async fn claim_manual(
        &self,
        ws: WorkspaceId,
        destination: DestinationId,
        delivery: DeliveryId,
        now: OffsetDateTime,
        lease: Duration,
    ) -> Result<ManualClaim, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let rows: Vec<ClaimRow> = diesel::sql_query(format!(
            "WITH old AS (
                 SELECT id, status FROM webhook_deliveries
                 WHERE id = $1 AND workspace_id = $4 AND destination_id = $5
                   AND NOT (status = 'sending' AND next_attempt_at > $3)
                 FOR UPDATE
             )
             UPDATE webhook_deliveries d SET status = 'sending', next_attempt_at = $2, updated_at = $3
             FROM old, webhook_events e, webhook_destinations w
             WHERE d.id = old.id AND e.id = d.event_id AND w.id = d.destination_id
             RETURNING {CLAIM_RETURNING}, old.status AS old_status"
        ))
        .bind::<BigInt, _>(delivery.0)
        .bind::<Timestamptz, _>(ts(now, lease))
        .bind::<Timestamptz, _>(now)
        .bind::<BigInt, _>(ws.0)
        .bind::<BigInt, _>(destination.0)
        .load(&mut conn)
        .await
        .map_err(repo)?;
        if let Some(row) = rows.into_iter().next() {
            // A delivery still on its schedule keeps it after a failed manual attempt.
            let on_schedule = matches!(row.old_status.as_str(), "pending" | "paused" | "sending");
            return Ok(ManualClaim::Claimed(Box::new(row.into_claim(AttemptTrigger::Manual, on_schedule))));
        }
        #[derive(QueryableByName)]
        struct N {
            #[diesel(sql_type = BigInt)]
            n: i64,
        }
        let exists: N = diesel::sql_query(
            "SELECT count(*) AS n FROM webhook_deliveries WHERE id = $1 AND workspace_id = $2 AND destination_id = $3",
        )
        .bind::<BigInt, _>(delivery.0)
        .bind::<BigInt, _>(ws.0)
        .bind::<BigInt, _>(destination.0)
        .get_result(&mut conn)
        .await
        .map_err(repo)?;
        Ok(if exists.n > 0 { ManualClaim::InProgress } else { ManualClaim::NotFound })
    }

    async fn create_test(
        &self,
        ws: WorkspaceId,
        destination: DestinationId,
        event: EventType,
        payload: &str,
        now: OffsetDateTime,
        lease: Duration,
    ) -> Result<Option<ClaimedDelivery>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<ClaimRow> = diesel::sql_query(
            "WITH w AS (
                 SELECT * FROM webhook_destinations WHERE workspace_id = $1 AND id = $2
             ), e AS (
                 INSERT INTO webhook_events (workspace_id, event_type, message_id, payload, sample)
                 SELECT $1, $6, 'msg_' || replace(gen_random_uuid()::text, '-', ''), $4, true FROM w
                 RETURNING id, message_id, payload
             ), d AS (
                 INSERT INTO webhook_deliveries (workspace_id, destination_id, event_id, status, next_attempt_at,
                                                 created_at, updated_at)
                 SELECT $1, w.id, e.id, 'sending', $5, $3, $3 FROM w, e
                 RETURNING id, workspace_id, destination_id, attempt_count
             )
             SELECT d.id, d.workspace_id, d.destination_id, d.attempt_count, w.url, w.secret_encrypted AS secret,
                    CASE WHEN w.previous_secret_expires_at > $3 THEN w.previous_secret_encrypted END AS previous_secret,
                    e.message_id, e.payload, 'pending' AS old_status
             FROM d, w, e",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<BigInt, _>(destination.0)
        .bind::<Timestamptz, _>(now)
        .bind::<Text, _>(payload)
        .bind::<Timestamptz, _>(ts(now, lease))
        .bind::<Text, _>(event.as_str())
        .get_result(&mut conn)
        .await
        .optional_row()
        .map_err(repo)?;
        Ok(row.map(|r| r.into_claim(AttemptTrigger::Test, false)))
    }

    async fn record(&self, records: &[AttemptRecord], auto_disable_after: Duration) -> Result<(), RepoError> {
        if records.is_empty() {
            return Ok(());
        }
        let mut conn = self.db.conn().await.map_err(repo)?;
        conn.transaction(|conn| record_tx(conn, records, auto_disable_after).scope_boxed()).await.map_err(repo)?;
        for r in records {
            metrics::counter!(DELIVERIES, "outcome" => outcome(r.status)).increment(1);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-03-01 10:00:00 UTC);

    fn limits() -> ClaimLimits {
        ClaimLimits { lease: Duration::from_secs(60), max_in_flight: 2, rate_per_sec: 10.0, burst: 3.0 }
    }

    fn cands(dests: &[i64]) -> Vec<Candidate> {
        dests.iter().enumerate().map(|(i, d)| Candidate { id: i as i64 + 1, destination_id: *d }).collect()
    }

    #[test]
    fn in_flight_limit_leaves_the_rest_due_and_untouched() {
        let a = allot(&cands(&[7, 7, 7, 8]), &HashMap::from([(7, 1)]), &HashMap::new(), limits(), NOW);
        assert_eq!(a.claimed, vec![1, 4], "one slot left for 7, 8 is free");
        assert!(a.deferred.is_empty(), "2 and 3 are not rescheduled: {:?}", a.deferred);
        assert_eq!(a.tokens, vec![(7, 2.0), (8, 2.0)], "only the claimed ones took tokens");
    }

    #[test]
    fn rate_limit_spreads_the_waiting_ones_at_the_rate() {
        let mut l = limits();
        l.max_in_flight = 100;
        let buckets = HashMap::from([(7, (1.0, NOW))]);
        let a = allot(&cands(&[7, 7, 7]), &HashMap::new(), &buckets, l, NOW);
        assert_eq!(a.claimed, vec![1]);
        let waits: Vec<f64> = a.deferred.iter().map(|(_, at)| (*at - NOW).as_seconds_f64()).collect();
        assert!((waits[0] - 0.1).abs() < 1e-6 && (waits[1] - 0.2).abs() < 1e-6, "{waits:?}");
        assert_eq!(a.tokens, vec![(7, 0.0)]);
    }

    #[test]
    fn tokens_refill_with_time_up_to_the_burst() {
        let mut l = limits();
        l.max_in_flight = 100;
        let buckets = HashMap::from([(7, (0.0, NOW - time::Duration::seconds(60)))]);
        let a = allot(&cands(&[7, 7, 7, 7]), &HashMap::new(), &buckets, l, NOW);
        assert_eq!(a.claimed.len(), 3, "burst of 3");
    }

    #[test]
    fn a_success_resets_the_failure_clock() {
        let rec = |dest: i64, secs: i64, effect| AttemptRecord {
            delivery_id: DeliveryId(1),
            workspace_id: WorkspaceId(1),
            destination_id: DestinationId(dest),
            attempt_number: 1,
            trigger: AttemptTrigger::Scheduled,
            attempted_at: NOW + time::Duration::seconds(secs),
            status_code: Some(500),
            error: None,
            duration_ms: 1,
            response_excerpt: String::new(),
            next_attempt_at: None,
            status: domain::webhooks::DeliveryStatus::Pending,
            effect,
        };
        let v = verdicts(&[
            rec(1, 0, DestinationEffect::Failing),
            rec(1, 1, DestinationEffect::Healthy),
            rec(2, 0, DestinationEffect::Failing),
            rec(2, 2, DestinationEffect::Healthy),
            rec(2, 3, DestinationEffect::Failing),
            rec(3, 0, DestinationEffect::Gone),
        ]);
        assert_eq!(v.healthy, vec![1]);
        let failing: Vec<(i64, bool)> = v.failing.iter().map(|f| (f.0, f.2)).collect();
        assert_eq!(failing, vec![(2, true), (3, false)]);
        assert_eq!(v.gone.len(), 1);
    }
}
