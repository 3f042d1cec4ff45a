//! The transactional outbox: events are written by the code path that makes the change, in the
//! same transaction, so a change never commits without its event and an event never exists for a
//! change that rolled back. The delivery workers read from here; nothing is ever enqueued
//! anywhere else, so there is no second step that a crash could skip.

use std::collections::BTreeMap;

use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::webhooks::controls::{EventScope, Routing};
use domain::webhooks::payload::envelope;
use domain::webhooks::{DomainEvent, EventSubjects, EventType};
use domain::workspace::WorkspaceId;
use time::OffsetDateTime;

/// A new event's message id as SQL: `msg_` and 32 hex digits, the `webhook-id` its deliveries are
/// signed under. One expression for both writers of `webhook_events` ([`record`] and
/// [`record_sample`]).
macro_rules! new_message_id {
    () => {
        "'msg_' || replace(gen_random_uuid()::text, '-', '')"
    };
}

/// Records `events` **inside the caller's open transaction**, in order, each with `timestamp`
/// `at`; the one way an event is written (a test send's sample: [`record_sample`]).
///
/// Call it from the transaction that makes the change (`conn.transaction(|conn| …)`), after the
/// change itself, with the events the domain decided on (their `data` is the record exactly as
/// the REST API returns it):
///
/// ```ignore
/// conn.transaction(|conn| async move {
///     let channel = insert_channel(conn, ws, &new).await?;
///     let event = new.event(&channel); // the domain's `channel.created`, never named here
///     adapters_postgres::webhooks::outbox::record(conn, ws, OffsetDateTime::now_utc(), &[event]).await?;
///     Ok(channel)
/// }.scope_boxed()).await
/// ```
///
/// It writes each event (always: it is the workspace's events feed, `GET /v1/events`, and what
/// replays send again) and one pending delivery per destination of the workspace that is active
/// and subscribes to its type, on a plan with webhooks, and is not the destination the event is
/// about ([`DomainEvent::excluded_destination`]). Event ids follow the order of `events`, and so
/// do their deliveries; a run of events of one type (a group commit's messages) is written by
/// one statement. Delivery starts when the transaction commits; a rollback discards the events
/// with the change.
///
/// # Errors
/// Database errors, which should fail (roll back) the caller's transaction.
pub async fn record(
    conn: &mut AsyncPgConnection,
    workspace: WorkspaceId,
    at: OffsetDateTime,
    events: &[DomainEvent],
) -> diesel::QueryResult<()> {
    let same_statement = |a: &DomainEvent, b: &DomainEvent| {
        a.event_type() == b.event_type() && a.excluded_destination() == b.excluded_destination()
    };
    for run in events.chunk_by(same_statement) {
        insert(conn, workspace, run, at).await?;
    }
    Ok(())
}

/// Records the sample event of a test send (`POST /v1/webhooks/{webhook_id}/test`) **inside the
/// caller's open transaction** and answers its id. A sample is no event of the workspace: marked
/// `sample`, it stays out of the feed and replays, and no destination is queued for it here; the
/// caller queues the one delivery to the destination under test.
///
/// # Errors
/// Database errors, which should fail (roll back) the caller's transaction.
pub async fn record_sample(
    conn: &mut AsyncPgConnection,
    workspace: WorkspaceId,
    event: EventType,
    payload: &str,
) -> diesel::QueryResult<i64> {
    #[derive(QueryableByName)]
    struct Recorded {
        #[diesel(sql_type = BigInt)]
        id: i64,
    }
    let recorded: Recorded = diesel::sql_query(concat!(
        "INSERT INTO webhook_events (workspace_id, event_type, message_id, payload, sample)
         VALUES ($1, $2, ",
        new_message_id!(),
        ", $3, true)
         RETURNING id"
    ))
    .bind::<BigInt, _>(workspace.0)
    .bind::<Text, _>(event.as_str())
    .bind::<Text, _>(payload)
    .get_result(conn)
    .await?;
    Ok(recorded.id)
}

/// The plans the access policy includes webhooks in; below them nothing is delivered.
fn webhook_plans() -> Vec<&'static str> {
    domain::access::plans_including(domain::access::WEBHOOKS_PLAN).into_iter().map(|p| p.as_str()).collect()
}

/// A subscribed destination with a filter or per-thread ordering, paired with one new event: the
/// domain decides whether and in which turn it gets it.
#[derive(QueryableByName)]
struct Controlled {
    #[diesel(sql_type = BigInt)]
    event_id: i64,
    #[diesel(sql_type = BigInt)]
    ord: i64,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
    #[diesel(sql_type = BigInt)]
    destination_id: i64,
    #[diesel(sql_type = Nullable<Text>)]
    filter: Option<String>,
    #[diesel(sql_type = Text)]
    ordering: String,
}

#[derive(QueryableByName)]
struct ThreadLabel {
    #[diesel(sql_type = BigInt)]
    thread_id: i64,
    #[diesel(sql_type = Text)]
    name: String,
}

/// The labels each of `threads` (of `workspace`) has now, for a labels filter.
pub(crate) async fn thread_labels(
    conn: &mut AsyncPgConnection,
    workspace: WorkspaceId,
    mut threads: Vec<i64>,
) -> diesel::QueryResult<BTreeMap<i64, Vec<String>>> {
    threads.sort_unstable();
    threads.dedup();
    let mut labels: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    if threads.is_empty() {
        return Ok(labels);
    }
    let rows: Vec<ThreadLabel> = diesel::sql_query(
        "SELECT tl.thread_id, l.name FROM thread_labels tl JOIN labels l ON l.id = tl.label_id
         WHERE tl.thread_id = ANY ($1) AND l.workspace_id = $2",
    )
    .bind::<Array<BigInt>, _>(&threads)
    .bind::<BigInt, _>(workspace.0)
    .load(conn)
    .await?;
    for r in rows {
        labels.entry(r.thread_id).or_default().push(r.name);
    }
    Ok(labels)
}

/// Writes `events`, all of one type and excluded destination ([`record`]), in one statement.
async fn insert(
    conn: &mut AsyncPgConnection,
    workspace: WorkspaceId,
    events: &[DomainEvent],
    at: OffsetDateTime,
) -> diesel::QueryResult<()> {
    let Some(first) = events.first() else { return Ok(()) };
    let (event, except) = (first.event_type(), first.excluded_destination());
    let payloads: Vec<String> = events.iter().map(|e| envelope(event, at, workspace, &e.data())).collect();
    // Each event's contact and thread are kept beside it, so that erasing a contact finds its
    // events by index.
    let subjects: Vec<EventSubjects> = events.iter().map(DomainEvent::subjects).collect();
    let contact_ids: Vec<Option<i64>> = subjects.iter().map(|s| s.contact_id).collect();
    let thread_ids: Vec<Option<i64>> = subjects.iter().map(|s| s.thread_id).collect();
    // The event is always kept (the workspace's events feed and replays read it). Deliveries go at
    // once to the active destinations that subscribe, on a plan with webhooks, and have neither
    // a filter nor an ordering; the others are returned (paired with each event) for the domain
    // to decide. Event ids follow the order of `events`, and so do their deliveries.
    let controlled: Vec<Controlled> = diesel::sql_query(concat!(
        "WITH ev AS (
             INSERT INTO webhook_events (workspace_id, event_type, message_id, payload, contact_id, thread_id, created_at)
             SELECT $1, $2, ",
        new_message_id!(),
        ", p.payload, p.contact_id, p.thread_id, $8
             FROM unnest($3::text[], $6::bigint[], $7::bigint[]) WITH ORDINALITY AS p (payload, contact_id, thread_id, ord)
             ORDER BY p.ord
             RETURNING id, created_at
         ), evo AS (
             SELECT id, created_at, row_number() OVER (ORDER BY id) AS ord FROM ev
         ), subscribed AS (
             SELECT w.id, w.filter, w.ordering FROM webhook_destinations w JOIN workspaces ws ON ws.id = w.workspace_id
             WHERE w.workspace_id = $1 AND w.active AND $2 = ANY (w.events)
               AND ws.plan = ANY ($4) AND w.id IS DISTINCT FROM $5
         ), plain AS (
             INSERT INTO webhook_deliveries (workspace_id, destination_id, event_id, next_attempt_at, created_at, updated_at)
             SELECT $1, s.id, evo.id, clock_timestamp(), evo.created_at, evo.created_at
             FROM evo CROSS JOIN subscribed s
             WHERE s.filter IS NULL AND s.ordering = 'none'
             ORDER BY evo.id, s.id
         )
         SELECT evo.id AS event_id, evo.ord, evo.created_at, s.id AS destination_id, s.filter::text AS filter, s.ordering
         FROM evo CROSS JOIN subscribed s
         WHERE NOT (s.filter IS NULL AND s.ordering = 'none')
         ORDER BY evo.id, s.id"
    ))
    .bind::<BigInt, _>(workspace.0)
    .bind::<Text, _>(event.as_str())
    .bind::<Array<Text>, _>(&payloads)
    // The plans the access policy includes webhooks in; below them nothing is queued.
    .bind::<Array<Text>, _>(webhook_plans())
    .bind::<Nullable<BigInt>, _>(except.map(|d| d.0))
    .bind::<Array<Nullable<BigInt>>, _>(&contact_ids)
    .bind::<Array<Nullable<BigInt>>, _>(&thread_ids)
    // The body's `timestamp`: a window from an event's timestamp (the feed's and a replay's
    // `since`, which compare `created_at`) includes it.
    .bind::<Timestamptz, _>(domain::webhooks::payload::event_time(at))
    .load(conn)
    .await?;
    if controlled.is_empty() {
        return Ok(());
    }
    let scopes: Vec<EventScope> = events.iter().map(DomainEvent::scope).collect();
    let scope = |ord: i64| usize::try_from(ord - 1).ok().and_then(|i| scopes.get(i).copied()).unwrap_or_default();
    let routed: Vec<(&Controlled, Routing)> =
        controlled.iter().map(|c| (c, Routing::stored(c.filter.as_deref(), &c.ordering))).collect();
    let threads: Vec<i64> =
        routed.iter().filter(|(_, r)| r.needs_labels()).filter_map(|(c, _)| scope(c.ord).thread_id).collect();
    let labels = thread_labels(conn, workspace, threads).await?;
    let (mut dests, mut events, mut created, mut keys) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (c, routing) in &routed {
        let s = scope(c.ord);
        let thread_labels = s.thread_id.and_then(|t| labels.get(&t)).map_or(&[][..], Vec::as_slice);
        if let Some(routed) = routing.route(s, thread_labels) {
            dests.push(c.destination_id);
            events.push(c.event_id);
            created.push(c.created_at);
            keys.push(routed.ordering_key);
        }
    }
    if dests.is_empty() {
        return Ok(());
    }
    diesel::sql_query(
        "INSERT INTO webhook_deliveries (workspace_id, destination_id, event_id, next_attempt_at, created_at, updated_at,
                                         ordering_key)
         SELECT $1, v.dest, v.ev, clock_timestamp(), v.created, v.created, v.key
         FROM unnest($2::bigint[], $3::bigint[], $4::timestamptz[], $5::bigint[]) WITH ORDINALITY
              AS v(dest, ev, created, key, ord)
         ORDER BY v.ord",
    )
    .bind::<BigInt, _>(workspace.0)
    .bind::<Array<BigInt>, _>(&dests)
    .bind::<Array<BigInt>, _>(&events)
    .bind::<Array<Timestamptz>, _>(&created)
    .bind::<Array<Nullable<BigInt>>, _>(&keys)
    .execute(conn)
    .await?;
    Ok(())
}
