//! Recording a batch of attempt results: the attempts, the deliveries' new states, and each
//! destination's health ([`verdicts`]), deactivating the ones the domain says failed too long or
//! are gone ([`deactivations`]).

use std::collections::BTreeMap;
use std::time::Duration;

use diesel::sql_types::{Array, BigInt, Bool, Integer, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::mail::SiteUrl;
use domain::webhooks::health::{deactivations, disabled_announcement, streaks, verdicts, StoredFailure, Streak};
use domain::webhooks::notices::{admin_mails, HealthNotice};
use domain::webhooks::pace::{Pace, PaceBounds};
use domain::webhooks::{AttemptRecord, WebhookDestination, WebhookRecord};
use domain::workspace::WorkspaceId;
use time::OffsetDateTime;

use domain::webhooks::controls::DeliveryShift;

use super::shift;
use crate::webhooks::{destinations, outbox};

#[derive(QueryableByName)]
struct Health {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    failing_since: Option<OffsetDateTime>,
    #[diesel(sql_type = Bool)]
    active: bool,
}

#[derive(QueryableByName)]
struct DestinationActive {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Bool)]
    active: bool,
}

#[derive(QueryableByName)]
struct Disabled {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    workspace_id: i64,
}

pub(super) async fn record_tx(
    conn: &mut AsyncPgConnection,
    records: &[AttemptRecord],
    auto_disable_after: Duration,
    bounds: PaceBounds,
    site: Option<&SiteUrl>,
) -> diesel::QueryResult<Vec<(i64, Pace)>> {
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

    // Only for deliveries that still exist (their destination may have been deleted meanwhile).
    // The same statement reads whether each delivery's destination is active (no round trip of
    // its own): a destination deactivated after this read leaves its delivery pending, which no
    // claim takes while the destination is inactive, as when it is deactivated after the write.
    let active: BTreeMap<i64, bool> = diesel::sql_query(
        "WITH attempts AS (
             INSERT INTO webhook_attempts (workspace_id, delivery_id, attempt_number, trigger, attempted_at,
                 status_code, error, duration_ms, response_excerpt, next_attempt_at)
             SELECT v.ws, v.id, v.n, v.trigger, v.at, v.code, v.err, v.dur, v.excerpt, v.next
             FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::text[], $5::timestamptz[], $6::int[],
                         $7::text[], $8::int[], $9::text[], $10::timestamptz[])
                  AS v(ws, id, n, trigger, at, code, err, dur, excerpt, next)
             WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = v.id)
         )
         SELECT d.id, w.active FROM webhook_deliveries d
         JOIN webhook_destinations w ON w.workspace_id = d.workspace_id AND w.id = d.destination_id
         WHERE d.id = ANY ($2)",
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
    .load::<DestinationActive>(conn)
    .await?
    .into_iter()
    .map(|r| (r.id, r.active))
    .collect();
    // A delivery no longer stored has no row for the update to write, whatever its status.
    let statuses: Vec<&str> = records
        .iter()
        .map(|r| r.status.recorded_for(active.get(&r.delivery_id.0).copied().unwrap_or(true)).as_str())
        .collect();
    // A stale result (a lease that expired and was claimed again) never overwrites a newer one.
    diesel::sql_query(
        "UPDATE webhook_deliveries d SET
             status = v.status,
             attempt_count = v.n, next_attempt_at = v.next, last_attempt_at = v.at, updated_at = v.at
         FROM unnest($1::bigint[], $2::text[], $3::int[], $4::timestamptz[], $5::timestamptz[])
              AS v(id, status, n, next, at)
         WHERE d.id = v.id AND d.attempt_count < v.n",
    )
    .bind::<Array<BigInt>, _>(&ids)
    .bind::<Array<Text>, _>(&statuses)
    .bind::<Array<Integer>, _>(&numbers)
    .bind::<Array<Nullable<Timestamptz>>, _>(&next)
    .bind::<Array<Timestamptz>, _>(&at)
    .execute(conn)
    .await?;

    let v = verdicts(records);
    let mut touched: Vec<i64> = v.failing.iter().map(|f| f.id).collect();
    touched.sort_unstable();
    // Destination rows are locked in id order before any update, so concurrent recorders of
    // several instances cannot deadlock; healthy destinations are only touched if they had failed.
    let locked: Vec<StreakRow> = diesel::sql_query(
        "SELECT id, failed_in_a_row, failing, failing_since FROM webhook_destinations
         WHERE (id = ANY ($1) AND (failing_since IS NOT NULL OR failed_in_a_row > 0)) OR id = ANY ($2)
         ORDER BY id FOR UPDATE",
    )
    .bind::<Array<BigInt>, _>(&v.healthy)
    .bind::<Array<BigInt>, _>(&touched)
    .load(conn)
    .await?;
    let mut notices = apply_streaks(conn, records, &locked).await?;
    if !v.healthy.is_empty() {
        diesel::sql_query(
            "UPDATE webhook_destinations SET failing_since = NULL WHERE id = ANY ($1) AND failing_since IS NOT NULL",
        )
        .bind::<Array<BigInt>, _>(&v.healthy)
        .execute(conn)
        .await?;
    }
    let mut stored: Vec<StoredFailure> = Vec::with_capacity(v.failing.len());
    if !v.failing.is_empty() {
        let ids: Vec<i64> = v.failing.iter().map(|f| f.id).collect();
        // Every failing destination's row is locked above, with its stored clock.
        let since: Vec<OffsetDateTime> = v
            .failing
            .iter()
            .map(|f| f.failing_since(locked.iter().find(|r| r.id == f.id).and_then(|r| r.failing_since)))
            .collect();
        let health: Vec<Health> = diesel::sql_query(
            "UPDATE webhook_destinations w SET failing_since = v.since
             FROM unnest($1::bigint[], $2::timestamptz[]) AS v(id, since)
             WHERE w.id = v.id
             RETURNING w.id, w.failing_since, w.active",
        )
        .bind::<Array<BigInt>, _>(&ids)
        .bind::<Array<Timestamptz>, _>(&since)
        .load(conn)
        .await?;
        stored.extend(health.into_iter().map(|h| StoredFailure {
            id: h.id,
            active: h.active,
            failing_since: h.failing_since,
        }));
    }
    let disable = deactivations(&v, &stored, auto_disable_after);
    if !disable.is_empty() {
        let ids: Vec<i64> = disable.iter().map(|d| d.id).collect();
        let reasons: Vec<&str> = disable.iter().map(|d| d.reason.as_str()).collect();
        let at: Vec<OffsetDateTime> = disable.iter().map(|d| d.at).collect();
        // Only a destination still active is deactivated (and recorded).
        let disabled: Vec<Disabled> = diesel::sql_query(
            "UPDATE webhook_destinations w
             SET active = false, disabled_reason = v.reason, disabled_at = v.at, updated_at = v.at
             FROM unnest($1::bigint[], $2::text[], $3::timestamptz[]) AS v(id, reason, at)
             WHERE w.id = v.id AND w.active
             RETURNING w.id, w.workspace_id",
        )
        .bind::<Array<BigInt>, _>(&ids)
        .bind::<Array<Text>, _>(&reasons)
        .bind::<Array<Timestamptz>, _>(&at)
        .load(conn)
        .await?;
        // Each deactivation is recorded in its workspace's audit log, by `system`, in this
        // transaction.
        let audits: Vec<_> = disabled
            .iter()
            .filter_map(|row| disable.iter().find(|d| d.id == row.id).map(|d| d.audit(WorkspaceId(row.workspace_id))))
            .collect();
        crate::audit::write(conn, &audits, None).await?;
        let latest = at.iter().copied().max().unwrap_or_else(OffsetDateTime::now_utc);
        shift(conn, &ids, DeliveryShift::PAUSE, latest).await?;
        // The workspace's other destinations that subscribe hear of it (this one is inactive now,
        // so the outbox does not queue the event for it), in this transaction.
        let disabled: Vec<i64> = disabled.into_iter().map(|d| d.id).collect();
        for d in destinations::load_many(conn, &disabled).await? {
            let at = d.disabled_at.unwrap_or(latest);
            let (event, notice) = disabled_announcement(&d);
            outbox::record(conn, d.workspace_id, at, &[event]).await?;
            notices.push((d, notice));
        }
        for d in &disable {
            tracing::warn!(destination_id = d.id, reason = d.reason, "webhook destination deactivated");
        }
    }
    if let Some(site) = site {
        tell_admins(conn, &notices, site).await?;
    }
    let now = records.iter().map(|r| r.attempted_at).max().unwrap_or_else(OffsetDateTime::now_utc);
    crate::webhooks::pace::apply(conn, records, bounds, now).await
}

/// E-mails each workspace's admins about its destinations that started failing or were
/// deactivated, through the mail outbox in this transaction.
async fn tell_admins(
    conn: &mut AsyncPgConnection,
    notices: &[(WebhookDestination, HealthNotice)],
    site: &SiteUrl,
) -> diesel::QueryResult<()> {
    let mut admins: BTreeMap<i64, Vec<domain::users::Email>> = BTreeMap::new();
    for (d, notice) in notices {
        let to = match admins.entry(d.workspace_id.0) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(crate::mail::admin_recipients(conn, d.workspace_id).await?)
            }
        };
        crate::mail::enqueue(conn, &admin_mails(notice, d, to, site)).await?;
    }
    Ok(())
}

#[derive(QueryableByName)]
struct StreakRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Integer)]
    failed_in_a_row: i32,
    #[diesel(sql_type = Bool)]
    failing: bool,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    failing_since: Option<OffsetDateTime>,
}

/// Writes the destinations' runs of failures ([`streaks`]) and emits `webhook.failing` /
/// `webhook.recovered` to the workspace's other destinations (never to the destination itself);
/// the destinations that started failing, for the admins' e-mail.
async fn apply_streaks(
    conn: &mut AsyncPgConnection,
    records: &[AttemptRecord],
    locked: &[StreakRow],
) -> diesel::QueryResult<Vec<(WebhookDestination, HealthNotice)>> {
    let stored: BTreeMap<i64, Streak> =
        locked.iter().map(|r| (r.id, Streak { failed_in_a_row: r.failed_in_a_row, failing: r.failing })).collect();
    let changes = streaks(records, &stored);
    let mut notices = Vec::new();
    if changes.is_empty() {
        return Ok(notices);
    }
    diesel::sql_query(
        "UPDATE webhook_destinations w SET failed_in_a_row = v.n, failing = v.failing
         FROM unnest($1::bigint[], $2::int[], $3::bool[]) AS v(id, n, failing) WHERE w.id = v.id",
    )
    .bind::<Array<BigInt>, _>(changes.iter().map(|c| c.id).collect::<Vec<_>>())
    .bind::<Array<Integer>, _>(changes.iter().map(|c| c.streak.failed_in_a_row).collect::<Vec<_>>())
    .bind::<Array<Bool>, _>(changes.iter().map(|c| c.streak.failing).collect::<Vec<_>>())
    .execute(conn)
    .await?;
    let emitting: Vec<i64> = changes.iter().filter(|c| !c.events.is_empty()).map(|c| c.id).collect();
    if emitting.is_empty() {
        return Ok(notices);
    }
    let latest = records.iter().map(|r| r.attempted_at).max().unwrap_or_else(OffsetDateTime::now_utc);
    for d in destinations::load_many(conn, &emitting).await? {
        for health in changes.iter().filter(|c| c.id == d.id.0).flat_map(|c| c.events.iter()) {
            let event = health.event(WebhookRecord::from(d.clone()));
            tracing::info!(
                destination_id = d.id.0,
                event = event.event_type().as_str(),
                "webhook destination health changed"
            );
            outbox::record(conn, d.workspace_id, latest, &[event]).await?;
            if let Some(notice) = health.notice() {
                notices.push((d.clone(), notice));
            }
        }
    }
    Ok(notices)
}
