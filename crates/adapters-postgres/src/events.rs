//! [`EventStore`] on the webhook outbox's `webhook_events`: the workspace's feed in feed order and
//! replays of a window to one destination.
//!
//! Feed order is (`txid`, id): rows from before the writers' floors carry their writing
//! transaction's id, every later row one value above them all ([`LATER`]), so among those the id
//! decides. The feed shows events up to the horizon that only event writers hold back
//! (`webhook_events_horizon()`, migration `events_writer_floor`; `docs/webhooks.md`, "Events
//! feed").

use std::collections::BTreeMap;

use async_trait::async_trait;
use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::audit::AuditEntry;
use domain::events::{EventPosition, EventStore, FeedPage, FeedQuery, ReplayCandidate, ReplayWindow, StoredEvent};
use domain::webhooks::controls::Routing;
use domain::webhooks::{DeliveryStatus, DestinationId, EventType};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

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
    #[diesel(sql_type = Nullable<Text>)]
    filter: Option<String>,
    #[diesel(sql_type = Text)]
    ordering: String,
}

#[derive(QueryableByName)]
struct Candidate {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// A stored event's id, type and delivered body, as read back (a replay, a contact's erasure).
#[derive(QueryableByName)]
pub(crate) struct EventBody {
    #[diesel(sql_type = BigInt)]
    pub(crate) id: i64,
    #[diesel(sql_type = Text)]
    pub(crate) event_type: String,
    #[diesel(sql_type = Text)]
    pub(crate) payload: String,
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
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                // Concurrent replays of one destination take turns, so the second one sees the
                // first one's deliveries (its statements start after the lock) and adds none.
                let found: Option<Found> = diesel::sql_query(
                    "SELECT active, filter::text AS filter, ordering FROM webhook_destinations
                     WHERE workspace_id = $1 AND id = $2 FOR UPDATE",
                )
                .bind::<BigInt, _>(ws.0)
                .bind::<BigInt, _>(destination.0)
                .get_result(conn)
                .await
                .map(Some)
                .or_else(|e| if e == diesel::result::Error::NotFound { Ok(None) } else { Err(e) })?;
                let Some(found) = found else { return Ok(None) };
                let routing = Routing::stored(found.filter.as_deref(), &found.ordering);
                let status = DeliveryStatus::queued_for(found.active);
                let queued = replay_to(conn, ws, destination, &window, &routing, status).await?;
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

/// The events of a replay's window (`$3` to `$4`, of the types `$5` or all) that destination `$2`
/// of workspace `$1` subscribes to and has no delivery of keeping them out (statuses `$6`, the
/// domain's `DeliveryStatus::kept_from_replay`): received events and events being sent or paused
/// are not queued twice; an event whose delivery waits for its next attempt is a candidate, its
/// delivery brought forward rather than a second one queued. A `FROM … WHERE` over
/// `webhook_events e`.
const WINDOW: &str = "
    FROM webhook_events e
    JOIN webhook_destinations d ON d.workspace_id = e.workspace_id AND d.id = $2
    WHERE e.workspace_id = $1 AND NOT e.sample
      AND e.created_at >= $3 AND e.created_at < $4
      AND e.event_type = ANY (d.events)
      AND (cardinality($5::text[]) = 0 OR e.event_type = ANY ($5::text[]))
      AND NOT EXISTS (
          SELECT 1 FROM webhook_deliveries x
          WHERE x.event_id = e.id AND x.destination_id = $2 AND x.status = ANY ($6::text[]))";

/// `sql` (built on [`WINDOW`]) with `$1` to `$6` bound.
fn in_window<'a>(
    sql: String,
    ws: WorkspaceId,
    destination: DestinationId,
    window: &'a ReplayWindow,
) -> diesel::query_builder::BoxedSqlQuery<'a, diesel::pg::Pg, diesel::query_builder::SqlQuery> {
    let types: Vec<&'static str> = window.event_types.iter().map(|t| t.as_str()).collect();
    diesel::sql_query(sql)
        .into_boxed()
        .bind::<BigInt, _>(ws.0)
        .bind::<BigInt, _>(destination.0)
        .bind::<Timestamptz, _>(window.since)
        .bind::<Timestamptz, _>(window.until)
        .bind::<Array<Text>, _>(types)
        .bind::<Array<Text>, _>(DeliveryStatus::kept_from_replay())
}

/// Reads back the stored bodies of `ids` (in that order), a thousand at a time.
async fn read_back(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    ids: &[i64],
) -> diesel::QueryResult<Vec<ReplayCandidate>> {
    let mut found: Vec<ReplayCandidate> = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(BODIES_AT_ONCE) {
        let bodies: BTreeMap<i64, EventBody> = diesel::sql_query(
            "SELECT id, event_type, payload FROM webhook_events WHERE workspace_id = $1 AND id = ANY ($2)",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<Array<BigInt>, _>(chunk)
        .load::<EventBody>(conn)
        .await?
        .into_iter()
        .map(|b| (b.id, b))
        .collect();
        found.extend(
            chunk
                .iter()
                .filter_map(|id| bodies.get(id).map(|b| ReplayCandidate::of_stored(*id, &b.event_type, &b.payload))),
        );
    }
    Ok(found)
}

/// How many stored bodies a replay reads at once.
const BODIES_AT_ONCE: usize = 1_000;

/// Queues a replay. A destination with neither filter nor ordering ([`Routing::is_plain`]) gets
/// every candidate but the events about itself: only the bodies of the few events that can be
/// about a destination are read back ([`EventType::names_a_destination`]), the domain names the
/// ones to leave out ([`ReplayWindow::own_events`]), and one statement queues the rest, due a
/// microsecond apart in feed order. Otherwise every candidate's body is read back (its channel),
/// and the domain decides which are queued, in which turn and when
/// ([`ReplayWindow::deliveries`]), as the outbox does for new events. Either way a candidate whose
/// delivery waits for its next attempt (`DeliveryStatus::brought_forward_by_replay`) is not
/// queued again: that delivery, if still waiting and due later, is made due when the replay's
/// would have been and counts as queued; one already due is on its way and counts as nothing. It
/// keeps its own turn (a plain destination's replay turn goes by delivery id, which would put
/// this older row first and hold the whole replay behind its longer retry delays).
async fn replay_to(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    destination: DestinationId,
    window: &ReplayWindow,
    routing: &Routing,
    status: DeliveryStatus,
) -> diesel::QueryResult<u64> {
    if routing.is_plain() {
        let naming: Vec<&'static str> =
            EventType::CATALOG.iter().filter(|t| t.names_a_destination()).map(|t| t.as_str()).collect();
        let about: Vec<Candidate> =
            in_window(format!("SELECT e.id {WINDOW} AND e.event_type = ANY ($7::text[])"), ws, destination, window)
                .bind::<Array<Text>, _>(naming)
                .load(conn)
                .await?;
        let about: Vec<i64> = about.into_iter().map(|c| c.id).collect();
        let own = ReplayWindow::own_events(destination, &read_back(conn, ws, &about).await?);
        let replayed: Replayed = in_window(
            format!(
                "WITH cand AS (
                     SELECT e.id, row_number() OVER (ORDER BY e.txid, e.id) AS ord, count(*) OVER () AS total,
                            (SELECT x.id FROM webhook_deliveries x
                             WHERE x.event_id = e.id AND x.destination_id = $2 AND x.status = ANY ($11::text[])
                             ORDER BY x.id LIMIT 1) AS waiting
                     {WINDOW} AND NOT (e.id = ANY ($7::bigint[]))
                 ), ins AS (
                     INSERT INTO webhook_deliveries (workspace_id, destination_id, event_id, status,
                                                     next_attempt_at, created_at, updated_at, ordering_key)
                     SELECT $1, $2, cand.id, $9, $8::timestamptz - (cand.total - cand.ord) * interval '1 microsecond', $8, $8, $10
                     FROM cand
                     WHERE cand.waiting IS NULL
                     ORDER BY cand.ord
                     RETURNING 1
                 ), fwd AS (
                     UPDATE webhook_deliveries x
                     SET next_attempt_at = $8::timestamptz - (cand.total - cand.ord) * interval '1 microsecond',
                         updated_at = $8
                     FROM cand
                     -- Still waiting (a worker may have claimed it since: re-checked on the row
                     -- it locks), and for later: one already due is on its way (not counted).
                     WHERE x.id = cand.waiting AND x.status = ANY ($11::text[])
                       AND x.next_attempt_at > $8::timestamptz - (cand.total - cand.ord) * interval '1 microsecond'
                     RETURNING 1
                 )
                 SELECT (SELECT count(*) FROM ins) + (SELECT count(*) FROM fwd) AS queued"
            ),
            ws,
            destination,
            window,
        )
        .bind::<Array<BigInt>, _>(own)
        .bind::<Timestamptz, _>(window.now)
        .bind::<Text, _>(status.as_str())
        .bind::<BigInt, _>(domain::events::REPLAY_ORDERING_KEY)
        .bind::<Array<Text>, _>(DeliveryStatus::brought_forward())
        .get_result(conn)
        .await?;
        return Ok(replayed.queued.unsigned_abs());
    }
    let ids: Vec<Candidate> =
        in_window(format!("SELECT e.id {WINDOW} ORDER BY e.txid, e.id"), ws, destination, window).load(conn).await?;
    let ids: Vec<i64> = ids.into_iter().map(|c| c.id).collect();
    let found = read_back(conn, ws, &ids).await?;
    let threads: Vec<i64> =
        if routing.needs_labels() { found.iter().filter_map(|c| c.scope.thread_id).collect() } else { Vec::new() };
    let labels = crate::webhooks::outbox::thread_labels(conn, ws, threads).await?;
    let deliveries = window.deliveries(destination, &found, routing, &labels);
    if deliveries.is_empty() {
        return Ok(0);
    }
    // Deliveries waiting for their next attempt are brought forward instead of queued again
    // (they keep their thread's turn).
    let all: Vec<i64> = deliveries.iter().map(|d| d.event_id).collect();
    let waiting: Vec<WaitingDelivery> = diesel::sql_query(
        "SELECT DISTINCT ON (event_id) event_id, id FROM webhook_deliveries
         WHERE destination_id = $1 AND event_id = ANY ($2) AND status = ANY ($3)
         ORDER BY event_id, id",
    )
    .bind::<BigInt, _>(destination.0)
    .bind::<Array<BigInt>, _>(&all)
    .bind::<Array<Text>, _>(DeliveryStatus::brought_forward())
    .load(conn)
    .await?;
    let waiting: BTreeMap<i64, i64> = waiting.into_iter().map(|w| (w.event_id, w.id)).collect();
    let (forward, deliveries): (Vec<_>, Vec<_>) =
        deliveries.into_iter().partition(|d| waiting.contains_key(&d.event_id));
    let forward_ids: Vec<i64> = forward.iter().filter_map(|d| waiting.get(&d.event_id).copied()).collect();
    let forward_due: Vec<OffsetDateTime> = forward.iter().map(|d| d.due).collect();
    let brought = diesel::sql_query(
        "UPDATE webhook_deliveries x SET next_attempt_at = v.due, updated_at = $2
         FROM unnest($1::bigint[], $3::timestamptz[]) AS v(id, due)
         WHERE x.id = v.id AND x.status = ANY ($4) AND x.next_attempt_at > v.due",
    )
    .bind::<Array<BigInt>, _>(&forward_ids)
    .bind::<Timestamptz, _>(window.now)
    .bind::<Array<Timestamptz>, _>(&forward_due)
    .bind::<Array<Text>, _>(DeliveryStatus::brought_forward())
    .execute(conn)
    .await?;
    let events: Vec<i64> = deliveries.iter().map(|d| d.event_id).collect();
    let due: Vec<OffsetDateTime> = deliveries.iter().map(|d| d.due).collect();
    let keys: Vec<Option<i64>> = deliveries.iter().map(|d| d.ordering_key).collect();
    let inserted = diesel::sql_query(
        "INSERT INTO webhook_deliveries (workspace_id, destination_id, event_id, status, next_attempt_at,
                                         created_at, updated_at, ordering_key)
         SELECT $1, $2, v.ev, $3, v.due, $4, $4, v.key
         FROM unnest($5::bigint[], $6::timestamptz[], $7::bigint[]) WITH ORDINALITY AS v(ev, due, key, ord)
         ORDER BY v.ord",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<BigInt, _>(destination.0)
    .bind::<Text, _>(status.as_str())
    .bind::<Timestamptz, _>(window.now)
    .bind::<Array<BigInt>, _>(&events)
    .bind::<Array<Timestamptz>, _>(&due)
    .bind::<Array<Nullable<BigInt>>, _>(&keys)
    .execute(conn)
    .await?;
    Ok((inserted + brought) as u64)
}

#[derive(QueryableByName)]
struct WaitingDelivery {
    #[diesel(sql_type = BigInt)]
    event_id: i64,
    #[diesel(sql_type = BigInt)]
    id: i64,
}
