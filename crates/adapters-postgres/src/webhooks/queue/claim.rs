//! Claiming due deliveries under the limiter: the destinations with deliveries due are read,
//! [`shares`] says how many of each one's oldest to read, those candidates, the throttles and the
//! in-flight counts are read under lock, [`allot`] decides, and the result is written back. A manual
//! attempt is admitted under the same locks by [`admit_manual`].

use std::collections::HashMap;

use diesel::sql_types::{Array, BigInt, Double, Integer, Nullable, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::webhooks::limiter::{
    admit_manual, allot, shares, DeliveryCandidate, DueDestination, ManualAdmission, Throttle,
};
use domain::webhooks::pace::{DestinationLimits, Pace, PaceBounds, PaceCaps};
use domain::webhooks::{AttemptTrigger, ClaimLimits, Claimed, ClaimedDelivery, DeliveryStatus};
use time::OffsetDateTime;

use super::{ts, ClaimRow, CLAIM_RETURNING};
use crate::webhooks::pace::{PaceRow, PACE_COLUMNS};

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
struct ThrottleRow {
    #[diesel(sql_type = Double)]
    tokens: f64,
    #[diesel(sql_type = Timestamptz)]
    refilled_at: OffsetDateTime,
    #[diesel(sql_type = Array<Timestamptz>)]
    recent_at: Vec<OffsetDateTime>,
    #[diesel(sql_type = Array<Integer>)]
    recent_sent: Vec<i32>,
    #[diesel(embed)]
    limits: LimitsRow,
}

impl ThrottleRow {
    fn throttle(&self) -> Throttle {
        Throttle {
            tokens: self.tokens,
            refilled_at: self.refilled_at,
            recent: self
                .recent_at
                .iter()
                .zip(&self.recent_sent)
                .map(|(at, n)| (*at, u32::try_from(*n).unwrap_or(0)))
                .collect(),
        }
    }
}

/// A destination's caps and stored pace (null columns: never measured).
#[derive(QueryableByName)]
struct LimitsRow {
    #[diesel(sql_type = Nullable<Integer>)]
    rate_limit_per_second: Option<i32>,
    #[diesel(sql_type = Nullable<Integer>)]
    max_in_flight: Option<i32>,
    #[diesel(embed)]
    pace: PaceRow,
}

impl LimitsRow {
    /// The destination's own caps.
    fn caps(&self) -> PaceCaps {
        PaceCaps {
            max_in_flight: self.max_in_flight.and_then(|v| u32::try_from(v).ok()),
            rate: self.rate_limit_per_second.and_then(|v| u32::try_from(v).ok()),
        }
    }

    fn limits(&self, bounds: PaceBounds) -> DestinationLimits {
        self.pace.pace().unwrap_or_else(|| Pace::start(bounds)).limits(bounds, self.caps())
    }
}

#[derive(QueryableByName)]
struct Due {
    #[diesel(sql_type = Timestamptz)]
    oldest_due: OffsetDateTime,
    #[diesel(sql_type = BigInt)]
    in_flight: i64,
    #[diesel(embed)]
    limits: LimitsRow,
}

/// How many of the oldest due deliveries a claim reads to find the destinations they belong to.
/// When more are due, it lists instead every destination with unfinished deliveries, one index
/// descent each (`webhook_deliveries_destination_due_idx`): the oldest due deliveries may then all
/// be one destination's backlog, which must not hide the others. Reading a few more of the
/// oldest is cheaper than the descents while little is due, which is most of the time.
const DUE_HEAD: i64 = 1000;

/// How many due deliveries a claim reads as candidates for each one it may take, shared among the
/// destinations ([`shares`]): more than one, so that loops claiming at the same time, which skip
/// each other's locked rows, still find some; few, since every candidate read is sorted before
/// the locks (a thousand cost a claim several times what four hundred do).
const CANDIDATES_PER_CLAIMED: usize = 4;

/// `column IN (…)` of the statuses whose delivery holds back the later ones of its ordering key,
/// as the domain defines them; written out (not bound) so PostgreSQL matches the partial index
/// `webhook_deliveries_ordering_idx` built on it.
fn holding_back_a_key(column: &str) -> String {
    let names: Vec<String> = DeliveryStatus::ALL
        .into_iter()
        .filter(|s| s.holds_back_its_key())
        .map(|s| format!("'{}'", s.as_str()))
        .collect();
    format!("{column} IN ({})", names.join(", "))
}

/// The condition that the due delivery `x` is not waiting for its thread's turn: no earlier
/// delivery of the same `ordering_key` to the same destination is unfinished.
fn takes_its_turn() -> String {
    format!(
        "(x.ordering_key IS NULL OR NOT EXISTS (
             SELECT 1 FROM webhook_deliveries p
             WHERE p.destination_id = x.destination_id AND p.ordering_key = x.ordering_key
               AND p.id < x.id AND {}))",
        holding_back_a_key("p.status")
    )
}

/// The destinations with a delivery due at `$1` that is not waiting for its thread's turn: the
/// oldest such delivery, the deliveries in flight, the caps and the stored pace of each. Read
/// without locks: [`shares`] only chooses what to read, [`allot`] decides under the locks.
fn due_destinations_sql() -> String {
    format!(
        "WITH RECURSIVE head AS (
             SELECT x.destination_id FROM webhook_deliveries x
             WHERE x.status IN ('pending', 'sending') AND x.next_attempt_at <= $1
             ORDER BY x.next_attempt_at LIMIT $2
         ), busy AS (
             (SELECT x.destination_id, x.next_attempt_at FROM webhook_deliveries x
              WHERE x.status IN ('pending', 'sending')
              ORDER BY x.destination_id, x.next_attempt_at LIMIT 1)
             UNION ALL
             SELECT n.destination_id, n.next_attempt_at FROM busy b CROSS JOIN LATERAL (
                 SELECT x.destination_id, x.next_attempt_at FROM webhook_deliveries x
                 WHERE x.status IN ('pending', 'sending') AND x.destination_id > b.destination_id
                 ORDER BY x.destination_id, x.next_attempt_at LIMIT 1
             ) n
         ), due AS (
             SELECT destination_id FROM head
             UNION
             -- Only when the head is full (a one-time filter: otherwise never run).
             SELECT destination_id FROM busy WHERE next_attempt_at <= $1 AND (SELECT count(*) FROM head) >= $2
         )
         SELECT o.next_attempt_at AS oldest_due,
                (SELECT count(*) FROM webhook_deliveries f
                 WHERE f.destination_id = due.destination_id AND f.status = 'sending'
                   AND f.next_attempt_at > $1) AS in_flight,
                w.rate_limit_per_second, w.max_in_flight, {pace}
         FROM due
         CROSS JOIN LATERAL (
             SELECT x.next_attempt_at FROM webhook_deliveries x
             WHERE x.destination_id = due.destination_id AND x.status IN ('pending', 'sending')
               AND x.next_attempt_at <= $1 AND {turn}
             ORDER BY x.next_attempt_at, x.id LIMIT 1
         ) o
         JOIN webhook_destinations w ON w.id = due.destination_id
         LEFT JOIN webhook_throttles t ON t.destination_id = due.destination_id",
        pace = PACE_COLUMNS.replace("destination_id", "due.destination_id"),
        turn = takes_its_turn(),
    )
}

/// Each destination's oldest due deliveries, up to its share (`$2`, `$3`), not waiting for their
/// thread's turn, taken in turns (every destination's first, then every one's second…), at most
/// `$4`, locked `SKIP LOCKED` so that instances never take the same row.
///
/// The per-destination reads run once, materialized, and the rows to lock are looked up by their
/// ids: joined directly, the planner could drive the join from the due deliveries and run every
/// destination's read again for each of them. It did so right after a bulk enqueue, before
/// statistics caught up (estimated one due delivery, 20,000 in fact): each claim took 19 s and
/// deliveries stalled for a minute.
fn candidates_sql() -> String {
    format!(
        "WITH c AS MATERIALIZED (
             SELECT k.id, k.next_attempt_at, k.turn FROM unnest($2::bigint[], $3::int[]) AS s(destination_id, n)
             CROSS JOIN LATERAL (
                 SELECT x.id, x.next_attempt_at, row_number() OVER (ORDER BY x.next_attempt_at, x.id) AS turn
                 FROM webhook_deliveries x
                 WHERE x.destination_id = s.destination_id AND x.status IN ('pending', 'sending')
                   AND x.next_attempt_at <= $1 AND {}
                 ORDER BY x.next_attempt_at, x.id LIMIT s.n
             ) k
         )
         SELECT d.id, d.destination_id FROM c JOIN webhook_deliveries d ON d.id = c.id
         WHERE d.id = ANY (ARRAY(SELECT c.id FROM c))
           AND d.status IN ('pending', 'sending') AND d.next_attempt_at <= $1
         ORDER BY c.turn, c.next_attempt_at, d.id
         LIMIT $4
         FOR UPDATE OF d SKIP LOCKED",
        takes_its_turn()
    )
}

pub(super) async fn claim_due_tx(
    conn: &mut AsyncPgConnection,
    now: OffsetDateTime,
    max: usize,
    limits: ClaimLimits,
) -> diesel::QueryResult<Claimed> {
    let started = std::time::Instant::now();
    let bounds = limits.bounds();
    let due: Vec<DueDestination> = diesel::sql_query(due_destinations_sql())
        .bind::<Timestamptz, _>(now)
        .bind::<BigInt, _>(DUE_HEAD)
        .load::<Due>(conn)
        .await?
        .into_iter()
        .map(|d| DueDestination {
            destination_id: d.limits.pace.destination_id,
            oldest_due: d.oldest_due,
            in_flight: d.in_flight,
            limits: d.limits.limits(bounds),
        })
        .collect();
    let shares = shares(&due, now, max, max.saturating_mul(CANDIDATES_PER_CLAIMED));
    if shares.is_empty() {
        return Ok(Claimed { deliveries: Vec::new(), next_due: next_due(conn, now).await? });
    }
    let (share_dests, share_counts): (Vec<i64>, Vec<i32>) =
        shares.iter().map(|(d, n)| (*d, i32::try_from(*n).unwrap_or(i32::MAX))).unzip();
    let candidates: Vec<Candidate> = diesel::sql_query(candidates_sql())
        .bind::<Timestamptz, _>(now)
        .bind::<Array<BigInt>, _>(&share_dests)
        .bind::<Array<Integer>, _>(&share_counts)
        .bind::<BigInt, _>(i64::try_from(max).unwrap_or(i64::MAX))
        .load(conn)
        .await?;
    if candidates.is_empty() {
        return Ok(Claimed { deliveries: Vec::new(), next_due: next_due(conn, now).await? });
    }
    let mut dests: Vec<i64> = candidates.iter().map(|c| c.destination_id).collect();
    dests.sort_unstable();
    dests.dedup();

    let rows = lock_throttles(conn, &dests, now).await?;
    let mut throttles: HashMap<i64, Throttle> = HashMap::new();
    let mut dest_limits: HashMap<i64, DestinationLimits> = HashMap::new();
    for row in rows {
        let id = row.limits.pace.destination_id;
        throttles.insert(id, row.throttle());
        dest_limits.insert(id, row.limits.limits(bounds));
    }
    let in_flight = count_in_flight(conn, &dests, now).await?;

    let candidates: Vec<DeliveryCandidate> =
        candidates.iter().map(|c| DeliveryCandidate { id: c.id, destination_id: c.destination_id }).collect();
    let allotment = allot(&candidates, &in_flight, &throttles, &dest_limits, now);

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
    let rows: Vec<ClaimRow> = if allotment.claimed.is_empty() {
        Vec::new()
    } else {
        claim_rows(conn, &allotment.claimed, now, limits).await?
    };
    let next_due = if rows.len() < max { next_due(conn, now).await? } else { None };
    // Last, just before the commit after which the claimed deliveries leave: their sends are
    // counted in the window from now, not from when the claim began (its statements, the locks
    // and the commit take a few milliseconds, under load many more, and a window counted from the
    // claim's start let the next claim send less than a second after these really left).
    write_throttles(conn, &allotment.throttles, now, now + started.elapsed()).await?;

    let windows: HashMap<i64, u32> = allotment.windows.iter().copied().collect();
    let deliveries = rows
        .into_iter()
        .map(|r| {
            let window = windows.get(&r.destination_id).copied().unwrap_or(1);
            ClaimedDelivery { window, ..r.into_claim(AttemptTrigger::Scheduled, true, now) }
        })
        .collect();
    Ok(Claimed { deliveries, next_due })
}

/// Locks the throttles of `dests` (a missing one is created full, refilled long ago: its pace is
/// the starting one until measured) in id order, so that instances claiming for the same
/// destinations cannot deadlock, and reads them with their destinations' caps and pace.
async fn lock_throttles(
    conn: &mut AsyncPgConnection,
    dests: &[i64],
    now: OffsetDateTime,
) -> diesel::QueryResult<Vec<ThrottleRow>> {
    diesel::sql_query(
        "INSERT INTO webhook_throttles (destination_id, tokens, refilled_at)
         SELECT u.dest, 0, $2 FROM unnest($1::bigint[]) AS u(dest)
         WHERE EXISTS (SELECT 1 FROM webhook_destinations w WHERE w.id = u.dest)
         ON CONFLICT DO NOTHING",
    )
    .bind::<Array<BigInt>, _>(dests)
    .bind::<Timestamptz, _>(now - time::Duration::hours(1))
    .execute(conn)
    .await?;
    diesel::sql_query(format!(
        "SELECT t.tokens, t.refilled_at, t.recent_at, t.recent_sent, w.rate_limit_per_second, w.max_in_flight, {}
         FROM webhook_throttles t JOIN webhook_destinations w ON w.id = t.destination_id
         WHERE t.destination_id = ANY ($1) ORDER BY t.destination_id FOR UPDATE OF t",
        PACE_COLUMNS.replace("destination_id", "t.destination_id")
    ))
    .bind::<Array<BigInt>, _>(dests)
    .load(conn)
    .await
}

/// The deliveries in flight (claimed, lease not expired) of each of `dests`. Counted under the
/// throttles' locks: an instance claiming for the same destination at the same time has committed
/// its claims by then, so both cannot fill the same slots.
async fn count_in_flight(
    conn: &mut AsyncPgConnection,
    dests: &[i64],
    now: OffsetDateTime,
) -> diesel::QueryResult<HashMap<i64, i64>> {
    Ok(diesel::sql_query(
        "SELECT destination_id, count(*) AS n FROM webhook_deliveries
         WHERE destination_id = ANY ($1) AND status = 'sending' AND next_attempt_at > $2
         GROUP BY destination_id",
    )
    .bind::<Array<BigInt>, _>(dests)
    .bind::<Timestamptz, _>(now)
    .load::<InFlight>(conn)
    .await?
    .into_iter()
    .map(|r| (r.destination_id, r.n))
    .collect())
}

/// Writes the throttles decided as of `now` (each with its own `refilled_at`). Last, just before
/// the commit after which the claimed deliveries leave: their sends (stamped `now` by the decision) are counted in the window from
/// `sent_at`, not from when the claim began (its statements, the locks and the commit take a few
/// milliseconds, under load many more, and a window counted from the claim's start let the next
/// claim send less than a second after these really left).
async fn write_throttles(
    conn: &mut AsyncPgConnection,
    throttles: &[(i64, Throttle)],
    now: OffsetDateTime,
    sent_at: OffsetDateTime,
) -> diesel::QueryResult<()> {
    let ids: Vec<i64> = throttles.iter().map(|(id, _)| *id).collect();
    let tokens: Vec<f64> = throttles.iter().map(|(_, t)| t.tokens).collect();
    let refilled: Vec<OffsetDateTime> = throttles.iter().map(|(_, t)| t.refilled_at).collect();
    let mut recent_ids = Vec::new();
    let mut recent_at = Vec::new();
    let mut recent_sent = Vec::new();
    for (id, t) in throttles {
        for (at, n) in &t.recent {
            recent_ids.push(*id);
            recent_at.push(if *at == now { sent_at } else { *at });
            recent_sent.push(i32::try_from(*n).unwrap_or(i32::MAX));
        }
    }
    diesel::sql_query(
        "UPDATE webhook_throttles t SET tokens = v.tokens, refilled_at = v.refilled_at,
                recent_at = r.at, recent_sent = r.sent
         FROM unnest($1::bigint[], $2::float8[], $3::timestamptz[]) AS v(id, tokens, refilled_at)
         CROSS JOIN LATERAL (
             SELECT coalesce(array_agg(s.at ORDER BY s.at), '{}') AS at,
                    coalesce(array_agg(s.n ORDER BY s.at), '{}') AS sent
             FROM unnest($4::bigint[], $5::timestamptz[], $6::int[]) AS s(id, at, n) WHERE s.id = v.id
         ) r
         WHERE t.destination_id = v.id",
    )
    .bind::<Array<BigInt>, _>(&ids)
    .bind::<Array<Double>, _>(&tokens)
    .bind::<Array<Timestamptz>, _>(&refilled)
    .bind::<Array<BigInt>, _>(&recent_ids)
    .bind::<Array<Timestamptz>, _>(&recent_at)
    .bind::<Array<Integer>, _>(&recent_sent)
    .execute(conn)
    .await?;
    Ok(())
}

/// Decides one manual attempt to `destination` ([`admit_manual`]): its throttle locked as a claim
/// locks it and its deliveries in flight counted under that lock. Called in the manual claim's
/// transaction before anything of the attempt is written; when it goes, the caller writes the
/// throttle with [`count_manual_send`] as its last statement. `None` when the destination does
/// not exist.
pub(super) async fn admit_manual_tx(
    conn: &mut AsyncPgConnection,
    destination: i64,
    now: OffsetDateTime,
    limits: ClaimLimits,
) -> diesel::QueryResult<Option<ManualAdmission>> {
    let Some(row) = lock_throttles(conn, &[destination], now).await?.pop() else { return Ok(None) };
    let in_flight = count_in_flight(conn, &[destination], now).await?.get(&destination).copied().unwrap_or(0);
    Ok(Some(admit_manual(Some(row.throttle()), in_flight, row.limits.limits(limits.bounds()), row.limits.caps(), now)))
}

/// Writes the throttle of an admitted manual attempt, last in its transaction, with the send
/// counted from `now + started.elapsed()`: when it leaves, as a worker's claim counts its sends.
pub(super) async fn count_manual_send(
    conn: &mut AsyncPgConnection,
    destination: i64,
    throttle: Throttle,
    now: OffsetDateTime,
    started: std::time::Instant,
) -> diesel::QueryResult<()> {
    write_throttles(conn, &[(destination, throttle)], now, now + started.elapsed()).await
}

#[derive(QueryableByName)]
struct NextDue {
    #[diesel(sql_type = Nullable<Timestamptz>)]
    at: Option<OffsetDateTime>,
}

/// The soonest time after `now` at which a delivery comes due ([`Claimed::next_due`]).
async fn next_due(conn: &mut AsyncPgConnection, now: OffsetDateTime) -> diesel::QueryResult<Option<OffsetDateTime>> {
    let row: NextDue = diesel::sql_query(
        "SELECT min(next_attempt_at) AS at FROM webhook_deliveries
         WHERE status IN ('pending', 'sending') AND next_attempt_at > $1",
    )
    .bind::<Timestamptz, _>(now)
    .get_result(conn)
    .await?;
    Ok(row.at)
}

/// Marks the `claimed` deliveries `sending` with their lease and returns what their sends need;
/// those of destinations deactivated since their event are parked instead.
async fn claim_rows(
    conn: &mut AsyncPgConnection,
    claimed: &[i64],
    now: OffsetDateTime,
    limits: ClaimLimits,
) -> diesel::QueryResult<Vec<ClaimRow>> {
    let rows: Vec<ClaimRow> = diesel::sql_query(format!(
        "UPDATE webhook_deliveries d SET status = 'sending', next_attempt_at = $2, updated_at = $3
         FROM webhook_events e, webhook_destinations w
         WHERE d.id = ANY ($1) AND e.id = d.event_id AND w.id = d.destination_id AND w.active
         RETURNING {CLAIM_RETURNING}"
    ))
    .bind::<Array<BigInt>, _>(claimed)
    .bind::<Timestamptz, _>(ts(now, limits.claim_lease))
    .bind::<Timestamptz, _>(now)
    .load(conn)
    .await?;
    if rows.len() < claimed.len() {
        // The others belong to destinations deactivated since their event: park them.
        diesel::sql_query(
            "UPDATE webhook_deliveries SET status = 'paused', updated_at = $2
             WHERE id = ANY ($1) AND status IN ('pending', 'sending')",
        )
        .bind::<Array<BigInt>, _>(
            claimed.iter().copied().filter(|id| !rows.iter().any(|r| r.id == *id)).collect::<Vec<_>>(),
        )
        .bind::<Timestamptz, _>(now)
        .execute(conn)
        .await?;
    }
    Ok(rows)
}
