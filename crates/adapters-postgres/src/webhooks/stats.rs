//! The facts of a destination's figures (`GET /v1/webhooks/{id}/stats`): attempts of the window
//! counted and their durations' percentiles in one aggregate, unfinished and given-up
//! deliveries, the latest failure, the stored pace and the destination's caps.

use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::webhooks::pace::PaceCaps;
use domain::webhooks::stats::{LastFailure, LatencyMs, StatsFacts};
use domain::webhooks::DestinationId;
use domain::workspace::WorkspaceId;
use time::OffsetDateTime;

use super::pace::{PaceRow, PACE_COLUMNS};

#[derive(QueryableByName)]
struct Dest {
    #[diesel(sql_type = Nullable<diesel::sql_types::Integer>)]
    rate_limit_per_second: Option<i32>,
    #[diesel(sql_type = Nullable<diesel::sql_types::Integer>)]
    max_in_flight: Option<i32>,
}

#[derive(QueryableByName)]
struct Counts {
    #[diesel(sql_type = BigInt)]
    delivered: i64,
    #[diesel(sql_type = BigInt)]
    failed: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    p50: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    p95: Option<i64>,
    #[diesel(sql_type = BigInt)]
    pending: i64,
    #[diesel(sql_type = BigInt)]
    exhausted: i64,
}

#[derive(QueryableByName)]
struct Failure {
    #[diesel(sql_type = Timestamptz)]
    attempted_at: OffsetDateTime,
    #[diesel(sql_type = Nullable<diesel::sql_types::Integer>)]
    status_code: Option<i32>,
    #[diesel(sql_type = Text)]
    message: String,
}

/// The facts; `None` when the workspace has no such destination.
pub(super) async fn load(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    id: DestinationId,
    since: OffsetDateTime,
) -> diesel::QueryResult<Option<StatsFacts>> {
    let dest: Vec<Dest> = diesel::sql_query(
        "SELECT rate_limit_per_second, max_in_flight FROM webhook_destinations WHERE workspace_id = $1 AND id = $2",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<BigInt, _>(id.0)
    .load(conn)
    .await?;
    let Some(dest) = dest.into_iter().next() else { return Ok(None) };
    // A delivered attempt is a 2xx answer, as the delivery engine judges it.
    let counts: Counts = diesel::sql_query(
        "WITH a AS (
             SELECT a.status_code, a.duration_ms FROM webhook_attempts a
             JOIN webhook_deliveries d ON d.id = a.delivery_id
             WHERE d.workspace_id = $1 AND d.destination_id = $2 AND a.attempted_at >= $3
         )
         SELECT
             (SELECT count(*) FROM a WHERE status_code BETWEEN 200 AND 299) AS delivered,
             (SELECT count(*) FROM a WHERE status_code IS NULL OR status_code NOT BETWEEN 200 AND 299) AS failed,
             (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY duration_ms) FROM a)::bigint AS p50,
             (SELECT percentile_disc(0.95) WITHIN GROUP (ORDER BY duration_ms) FROM a)::bigint AS p95,
             (SELECT count(*) FROM webhook_deliveries
              WHERE workspace_id = $1 AND destination_id = $2 AND status IN ('pending', 'sending', 'paused')) AS pending,
             (SELECT count(*) FROM webhook_deliveries
              WHERE workspace_id = $1 AND destination_id = $2 AND status = 'failed' AND updated_at >= $3) AS exhausted",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<BigInt, _>(id.0)
    .bind::<Timestamptz, _>(since)
    .get_result(conn)
    .await?;
    let failure: Vec<Failure> = diesel::sql_query(
        "SELECT a.attempted_at, a.status_code,
                coalesce(nullif(a.error, ''), nullif(left(a.response_excerpt, 200), ''),
                         'HTTP ' || a.status_code::text, 'no answer') AS message
         FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
         WHERE d.workspace_id = $1 AND d.destination_id = $2 AND a.attempted_at >= $3
           AND (a.status_code IS NULL OR a.status_code NOT BETWEEN 200 AND 299)
         ORDER BY a.attempted_at DESC, a.id DESC LIMIT 1",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<BigInt, _>(id.0)
    .bind::<Timestamptz, _>(since)
    .load(conn)
    .await?;
    let pace: Vec<PaceRow> =
        diesel::sql_query(format!("SELECT {PACE_COLUMNS} FROM webhook_throttles WHERE destination_id = $1"))
            .bind::<BigInt, _>(id.0)
            .load(conn)
            .await?;
    let count = |n: i64| u64::try_from(n).unwrap_or(0);
    Ok(Some(StatsFacts {
        delivered: count(counts.delivered),
        failed_attempts: count(counts.failed),
        pending: count(counts.pending),
        exhausted: count(counts.exhausted),
        latency_ms: LatencyMs {
            p50: counts.p50.and_then(|v| u64::try_from(v).ok()),
            p95: counts.p95.and_then(|v| u64::try_from(v).ok()),
        },
        last_failure: failure.into_iter().next().map(|f| LastFailure {
            at: f.attempted_at,
            status: f.status_code.and_then(|c| u16::try_from(c).ok()),
            message: f.message,
        }),
        pace: <[PaceRow]>::first(&pace).and_then(PaceRow::pace),
        caps: PaceCaps {
            max_in_flight: dest.max_in_flight.and_then(|v| u32::try_from(v).ok()),
            rate: dest.rate_limit_per_second.and_then(|v| u32::try_from(v).ok()),
        },
    }))
}
