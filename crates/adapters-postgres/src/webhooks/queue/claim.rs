//! Claiming due deliveries under the limiter: the candidates, the buckets and the in-flight
//! counts are read under lock, [`allot`] decides, and the result is written back.

use std::collections::HashMap;

use diesel::sql_types::{Array, BigInt, Double, Integer, Nullable, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::webhooks::limiter::{allot, DeliveryCandidate, TokenBucket};
use domain::webhooks::pace::{DestinationLimits, Pace, PaceCaps};
use domain::webhooks::{AttemptTrigger, ClaimLimits, ClaimedDelivery, DeliveryStatus};
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
struct Bucket {
    #[diesel(sql_type = Double)]
    tokens: f64,
    #[diesel(sql_type = Timestamptz)]
    refilled_at: OffsetDateTime,
    #[diesel(sql_type = Nullable<Integer>)]
    rate_limit_per_second: Option<i32>,
    #[diesel(sql_type = Nullable<Integer>)]
    max_in_flight: Option<i32>,
    #[diesel(embed)]
    pace: PaceRow,
}

/// How many due deliveries (oldest first) a claim looks through to find each destination's
/// oldest ones. Deliveries beyond it are seen once the older ones are sent.
const CLAIM_SCAN: i64 = 2000;

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

pub(super) async fn claim_due_tx(
    conn: &mut AsyncPgConnection,
    now: OffsetDateTime,
    max: usize,
    limits: ClaimLimits,
) -> diesel::QueryResult<Vec<ClaimedDelivery>> {
    // At most what each destination may have in flight (its pace, its cap, the bound), the
    // oldest first: a destination with a backlog does not fill the claim with deliveries it has
    // no room for, and the other destinations' due deliveries behind them are claimed too. A
    // delivery waiting for its thread's turn (`ordering_key`: an earlier delivery of the same
    // thread to the same destination is not finished) is not a candidate at all. A destination
    // never measured is looked at with the starting pace's concurrency.
    let candidates: Vec<Candidate> = diesel::sql_query(format!(
        "SELECT d.id, d.destination_id FROM webhook_deliveries d
         JOIN (
             SELECT s.id, s.destination_id, s.next_attempt_at,
                    row_number() OVER (PARTITION BY s.destination_id ORDER BY s.next_attempt_at, s.id) AS rn
             FROM (
                 SELECT x.id, x.destination_id, x.next_attempt_at FROM webhook_deliveries x
                 WHERE x.status IN ('pending', 'sending') AND x.next_attempt_at <= $1
                   AND (x.ordering_key IS NULL OR NOT EXISTS (
                       SELECT 1 FROM webhook_deliveries p
                       WHERE p.destination_id = x.destination_id AND p.ordering_key = x.ordering_key
                         AND p.id < x.id AND {}))
                 ORDER BY x.next_attempt_at
                 LIMIT $3
             ) s
         ) r ON r.id = d.id
         JOIN webhook_destinations w ON w.id = r.destination_id
         LEFT JOIN webhook_throttles t ON t.destination_id = r.destination_id
         WHERE r.rn <= least($4, coalesce(w.max_in_flight, $4), greatest(floor(coalesce(t.concurrency, $5)), 1))
           AND d.status IN ('pending', 'sending') AND d.next_attempt_at <= $1
         ORDER BY r.next_attempt_at, d.id
         LIMIT $2
         FOR UPDATE OF d SKIP LOCKED",
        holding_back_a_key("p.status")
    ))
    .bind::<Timestamptz, _>(now)
    .bind::<BigInt, _>(i64::try_from(max).unwrap_or(i64::MAX))
    .bind::<BigInt, _>(CLAIM_SCAN)
    .bind::<BigInt, _>(i64::from(limits.max_in_flight.max(1)))
    .bind::<Double, _>(Pace::start(limits.bounds()).concurrency)
    .load(conn)
    .await?;
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let mut dests: Vec<i64> = candidates.iter().map(|c| c.destination_id).collect();
    dests.sort_unstable();
    dests.dedup();

    // A new bucket is full (refilled long ago); its pace is the starting one until measured.
    diesel::sql_query(
        "INSERT INTO webhook_throttles (destination_id, tokens, refilled_at)
         SELECT u.dest, 0, $2 FROM unnest($1::bigint[]) AS u(dest)
         WHERE EXISTS (SELECT 1 FROM webhook_destinations w WHERE w.id = u.dest)
         ON CONFLICT DO NOTHING",
    )
    .bind::<Array<BigInt>, _>(&dests)
    .bind::<Timestamptz, _>(now - time::Duration::hours(1))
    .execute(conn)
    .await?;
    // Locked in id order, so instances claiming for the same destinations cannot deadlock.
    let rows: Vec<Bucket> = diesel::sql_query(format!(
        "SELECT t.tokens, t.refilled_at, w.rate_limit_per_second, w.max_in_flight, {}
         FROM webhook_throttles t JOIN webhook_destinations w ON w.id = t.destination_id
         WHERE t.destination_id = ANY ($1) ORDER BY t.destination_id FOR UPDATE OF t",
        PACE_COLUMNS.replace("destination_id", "t.destination_id")
    ))
    .bind::<Array<BigInt>, _>(&dests)
    .load(conn)
    .await?;
    let bounds = limits.bounds();
    let mut buckets: HashMap<i64, TokenBucket> = HashMap::new();
    let mut dest_limits: HashMap<i64, DestinationLimits> = HashMap::new();
    for b in rows {
        let id = b.pace.destination_id;
        buckets.insert(id, TokenBucket { tokens: b.tokens, refilled_at: b.refilled_at });
        let caps = PaceCaps {
            max_in_flight: b.max_in_flight.and_then(|v| u32::try_from(v).ok()),
            rate: b.rate_limit_per_second.and_then(|v| u32::try_from(v).ok()),
        };
        dest_limits.insert(id, b.pace.pace().unwrap_or_else(|| Pace::start(bounds)).limits(bounds, caps));
    }

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

    let candidates: Vec<DeliveryCandidate> =
        candidates.iter().map(|c| DeliveryCandidate { id: c.id, destination_id: c.destination_id }).collect();
    let allotment = allot(&candidates, &in_flight, &buckets, &dest_limits, now);

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
         RETURNING {CLAIM_RETURNING}"
    ))
    .bind::<Array<BigInt>, _>(&allotment.claimed)
    .bind::<Timestamptz, _>(ts(now, limits.claim_lease))
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
    let windows: HashMap<i64, u32> = allotment.windows.iter().copied().collect();
    Ok(rows
        .into_iter()
        .map(|r| {
            let window = windows.get(&r.destination_id).copied().unwrap_or(1);
            ClaimedDelivery { window, ..r.into_claim(AttemptTrigger::Scheduled, true, now) }
        })
        .collect())
}
