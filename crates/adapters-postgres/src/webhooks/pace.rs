//! The stored adaptive pace of destinations (`webhook_throttles`), read by the claim and the
//! stats, written by the recorder with [`Pace::after`].

use std::collections::HashMap;

use diesel::sql_types::{Array, BigInt, Double, Nullable, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::webhooks::pace::{Pace, PaceBounds, PaceSample, PaceSignal};
use domain::webhooks::AttemptRecord;
use time::OffsetDateTime;

/// The current pace of each destination, by `destination_id`: `wms_webhook_pace_in_flight` and
/// `wms_webhook_pace_rate` (per second).
pub const PACE_IN_FLIGHT: &str = "wms_webhook_pace_in_flight";
/// See [`PACE_IN_FLIGHT`].
pub const PACE_RATE: &str = "wms_webhook_pace_rate";

#[derive(QueryableByName)]
pub(crate) struct PaceRow {
    #[diesel(sql_type = BigInt)]
    pub destination_id: i64,
    #[diesel(sql_type = Nullable<Double>)]
    concurrency: Option<f64>,
    #[diesel(sql_type = Nullable<Double>)]
    rate: Option<f64>,
    #[diesel(sql_type = Nullable<Double>)]
    threshold: Option<f64>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    decreased_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    hold_until: Option<OffsetDateTime>,
}

impl PaceRow {
    /// The stored pace; `None` when never measured.
    pub(crate) fn pace(&self) -> Option<Pace> {
        Some(Pace {
            concurrency: self.concurrency?,
            rate: self.rate?,
            threshold: self.threshold,
            decreased_at: self.decreased_at,
            hold_until: self.hold_until,
        })
    }
}

/// The columns of a [`PaceRow`] in `webhook_throttles`.
pub(crate) const PACE_COLUMNS: &str = "destination_id, concurrency, rate, threshold, decreased_at, hold_until";

/// Moves the pace of every destination in `records` by their signals, in the recorder's
/// transaction (rows locked in id order, like the claim's).
pub(crate) async fn apply(
    conn: &mut AsyncPgConnection,
    records: &[AttemptRecord],
    bounds: PaceBounds,
    now: OffsetDateTime,
) -> diesel::QueryResult<Vec<(i64, Pace)>> {
    let mut signals: HashMap<i64, Vec<PaceSample>> = HashMap::new();
    for r in records {
        if r.pace != PaceSignal::Neutral {
            let sample = PaceSample { started: r.attempted_at, signal: r.pace, window: r.window };
            signals.entry(r.destination_id.0).or_default().push(sample);
        }
    }
    if signals.is_empty() {
        return Ok(Vec::new());
    }
    let mut ids: Vec<i64> = signals.keys().copied().collect();
    ids.sort_unstable();
    diesel::sql_query(
        "INSERT INTO webhook_throttles (destination_id, tokens, refilled_at)
         SELECT u.dest, 1, $2 FROM unnest($1::bigint[]) AS u(dest)
         WHERE EXISTS (SELECT 1 FROM webhook_destinations w WHERE w.id = u.dest)
         ON CONFLICT DO NOTHING",
    )
    .bind::<Array<BigInt>, _>(&ids)
    .bind::<Timestamptz, _>(now)
    .execute(conn)
    .await?;
    let rows: Vec<PaceRow> = diesel::sql_query(format!(
        "SELECT {PACE_COLUMNS} FROM webhook_throttles WHERE destination_id = ANY ($1)
         ORDER BY destination_id FOR UPDATE"
    ))
    .bind::<Array<BigInt>, _>(&ids)
    .load(conn)
    .await?;
    let paces: Vec<(i64, Pace)> = rows
        .iter()
        .map(|r| {
            let before = r.pace().unwrap_or_else(|| Pace::start(bounds));
            (r.destination_id, before.after(&signals[&r.destination_id], bounds, now))
        })
        .collect();
    let col = |f: &dyn Fn(&Pace) -> Option<f64>| paces.iter().map(|(_, p)| f(p)).collect::<Vec<_>>();
    let at = |f: &dyn Fn(&Pace) -> Option<OffsetDateTime>| paces.iter().map(|(_, p)| f(p)).collect::<Vec<_>>();
    diesel::sql_query(
        "UPDATE webhook_throttles t SET concurrency = v.c, rate = v.r, threshold = v.th, decreased_at = v.dec,
             hold_until = v.hold
         FROM unnest($1::bigint[], $2::float8[], $3::float8[], $4::float8[], $5::timestamptz[], $6::timestamptz[])
              AS v(id, c, r, th, dec, hold)
         WHERE t.destination_id = v.id",
    )
    .bind::<Array<BigInt>, _>(paces.iter().map(|(id, _)| *id).collect::<Vec<_>>())
    .bind::<Array<Nullable<Double>>, _>(col(&|p| Some(p.concurrency)))
    .bind::<Array<Nullable<Double>>, _>(col(&|p| Some(p.rate)))
    .bind::<Array<Nullable<Double>>, _>(col(&|p| p.threshold))
    .bind::<Array<Nullable<Timestamptz>>, _>(at(&|p| p.decreased_at))
    .bind::<Array<Nullable<Timestamptz>>, _>(at(&|p| p.hold_until))
    .execute(conn)
    .await?;
    Ok(paces)
}

/// Publishes the paces just written as gauges.
pub(crate) fn publish(paces: &[(i64, Pace)], bounds: PaceBounds) {
    for (id, p) in paces {
        let l = p.limits(bounds, domain::webhooks::pace::PaceCaps::default());
        metrics::gauge!(PACE_IN_FLIGHT, "destination_id" => id.to_string()).set(f64::from(l.max_in_flight));
        metrics::gauge!(PACE_RATE, "destination_id" => id.to_string()).set(l.rate);
    }
}
