//! [`EventStore`] on the webhook outbox's `webhook_events`: the workspace's feed in feed order and
//! replays of a window to one destination.
//!
//! Feed order is (`txid`, id): rows from before the writers' floors carry their writing
//! transaction's id, every later row one value above them all ([`LATER`]), so among those the id
//! decides. The feed shows events up to the horizon that only event writers hold back
//! (`webhook_events_horizon()`, migration `events_writer_floor`; `docs/webhooks.md`, "Events
//! feed").

use async_trait::async_trait;
use diesel::sql_types::{Array, BigInt, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::audit::AuditEntry;
use domain::events::{EventPosition, EventStore, FeedPage, FeedQuery, ReplayWindow, StoredEvent};
use domain::webhooks::{DeliveryStatus, DestinationId};
use domain::workspace::WorkspaceId;
use domain::RepoError;

use crate::error::repo;
use crate::pool::Db;

/// [`EventStore`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgEventStore {
    db: Db,
}

impl PgEventStore {
    /// A store on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

/// The `txid` of every event written since the writers' floors exist (the column's default): above
/// every transaction id a feed position was made of before, so older cursors stay exact.
const LATER: i64 = 1 << 62;

#[derive(QueryableByName)]
struct Horizon {
    #[diesel(sql_type = BigInt)]
    horizon: i64,
}

#[derive(QueryableByName)]
struct EventRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    txid: i64,
    #[diesel(sql_type = Text)]
    message_id: String,
    #[diesel(sql_type = Text)]
    payload: String,
}

#[derive(QueryableByName)]
struct Replayed {
    #[diesel(sql_type = BigInt)]
    queued: i64,
}

#[derive(QueryableByName)]
struct Found {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    active: bool,
}

/// The page's statement. One text per combination of filters (rather than `$n IS NULL OR …`),
/// so each is planned for its own index: `webhook_events_feed_idx` or `…_feed_type_idx`.
fn page_sql(by_type: bool, since: bool) -> String {
    format!(
        "SELECT id, txid, message_id, payload FROM webhook_events
         WHERE workspace_id = $1 AND NOT sample AND (txid, id) <= ($2, $6) AND (txid, id) > ($3, $4){}{}
         ORDER BY txid, id
         LIMIT $5",
        if by_type { " AND event_type = $7" } else { "" },
        if since {
            if by_type {
                " AND created_at >= $8"
            } else {
                " AND created_at >= $7"
            }
        } else {
            ""
        },
    )
}

#[async_trait]
impl EventStore for PgEventStore {
    async fn page(&self, ws: WorkspaceId, query: FeedQuery) -> Result<FeedPage, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        // Every event id up to the horizon belongs to a transaction that has ended, so the next
        // statement (a new snapshot) sees all of them that were committed, and no event can later
        // appear at or below it. Only transactions writing events hold it back; events above it
        // wait for the next poll.
        let horizon: Horizon = diesel::sql_query("SELECT webhook_events_horizon() AS horizon")
            .get_result(&mut conn)
            .await
            .map_err(repo)?;
        let sql = page_sql(query.event_type.is_some(), query.since.is_some());
        let q = diesel::sql_query(sql)
            .into_boxed()
            .bind::<BigInt, _>(ws.0)
            .bind::<BigInt, _>(LATER)
            .bind::<BigInt, _>(query.after.txid)
            .bind::<BigInt, _>(query.after.id)
            .bind::<BigInt, _>(i64::from(query.limit))
            .bind::<BigInt, _>(horizon.horizon);
        let q = match query.event_type {
            Some(t) => q.bind::<Text, _>(t.as_str()),
            None => q,
        };
        let q = match query.since {
            Some(s) => q.bind::<Timestamptz, _>(s),
            None => q,
        };
        let rows: Vec<EventRow> = q.load(&mut conn).await.map_err(repo)?;
        let full = rows.len() >= usize::from(query.limit);
        let events: Vec<StoredEvent> = rows
            .into_iter()
            .map(|r| StoredEvent {
                message_id: r.message_id,
                position: EventPosition { txid: r.txid, id: r.id },
                payload: r.payload,
            })
            .collect();
        let last = events.last().map_or(query.after, |e| e.position);
        // At the end of the feed, resume from the horizon: everything below it has been seen.
        let next = if full { last } else { last.max(EventPosition { txid: LATER, id: horizon.horizon }) };
        Ok(FeedPage { events, next })
    }

    async fn replay(
        &self,
        ws: WorkspaceId,
        destination: DestinationId,
        window: &ReplayWindow,
        audit: &AuditEntry,
    ) -> Result<Option<u64>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let window = window.clone();
        let audit = audit.clone();
        let types: Vec<&'static str> = window.event_types.iter().map(|t| t.as_str()).collect();
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                // Concurrent replays of one destination take turns, so the second one sees the
                // first one's deliveries (its statement starts after the lock) and adds none.
                let found: Option<Found> = diesel::sql_query(
                    "SELECT active FROM webhook_destinations WHERE workspace_id = $1 AND id = $2 FOR UPDATE",
                )
                .bind::<BigInt, _>(ws.0)
                .bind::<BigInt, _>(destination.0)
                .get_result(conn)
                .await
                .map(Some)
                .or_else(|e| if e == diesel::result::Error::NotFound { Ok(None) } else { Err(e) })?;
                let Some(found) = found else { return Ok(None) };
                let replayed: Replayed = diesel::sql_query(
                    // Oldest first: due times a microsecond apart in feed order, all already due.
                    // An event whose delivery holds it (the domain's `DeliveryStatus::holds_event`)
                    // is not queued twice; the status of the new ones is the domain's too.
                    "WITH d AS (
                         SELECT id, events FROM webhook_destinations WHERE workspace_id = $1 AND id = $2
                     ), cand AS (
                         SELECT e.id, row_number() OVER (ORDER BY e.txid, e.id) AS ord, count(*) OVER () AS total
                         FROM webhook_events e, d
                         WHERE e.workspace_id = $1 AND NOT e.sample
                           AND e.created_at >= $3 AND e.created_at < $4
                           AND e.event_type = ANY (d.events)
                           AND (cardinality($5::text[]) = 0 OR e.event_type = ANY ($5::text[]))
                           AND NOT EXISTS (
                               SELECT 1 FROM webhook_deliveries x
                               WHERE x.event_id = e.id AND x.destination_id = $2
                                 AND x.status = ANY ($7::text[]))
                     ), ins AS (
                         INSERT INTO webhook_deliveries (workspace_id, destination_id, event_id, status,
                                                         next_attempt_at, created_at, updated_at)
                         SELECT $1, d.id, cand.id, $8,
                                $6::timestamptz - (cand.total - cand.ord) * interval '1 microsecond', $6, $6
                         FROM cand, d
                         ORDER BY cand.ord
                         RETURNING 1
                     )
                     SELECT count(*) AS queued FROM ins",
                )
                .bind::<BigInt, _>(ws.0)
                .bind::<BigInt, _>(destination.0)
                .bind::<Timestamptz, _>(window.since)
                .bind::<Timestamptz, _>(window.until)
                .bind::<Array<Text>, _>(types)
                .bind::<Timestamptz, _>(window.now)
                .bind::<Array<Text>, _>(DeliveryStatus::holding_event())
                .bind::<Text, _>(DeliveryStatus::queued_for(found.active).as_str())
                .get_result(conn)
                .await?;
                let queued = replayed.queued as u64;
                if let Some(entry) = ReplayWindow::record(&audit, queued) {
                    crate::audit::write(conn, &[entry], None).await?;
                }
                Ok(Some(queued))
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }
}
