//! The transactional outbox: events are written by the code path that makes the change, in the
//! same transaction, so a change never commits without its event and an event never exists for a
//! change that rolled back. The delivery workers read from here; nothing is ever enqueued
//! anywhere else, so there is no second step that a crash could skip.

use diesel::sql_types::{BigInt, Nullable, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::webhooks::payload::envelope;
use domain::webhooks::{EventSubjects, EventType};
use domain::workspace::WorkspaceId;
use time::OffsetDateTime;

/// Records a webhook event **inside the caller's open transaction**.
///
/// Call it from the transaction that makes the change (`conn.transaction(|conn| …)`), after the
/// change itself, with the event's `data` (for example the message or channel record exactly as
/// the REST API returns it):
///
/// ```ignore
/// conn.transaction(|conn| async move {
///     let channel = insert_channel(conn, ws, &new).await?;
///     adapters_postgres::webhooks::outbox::record(conn, ws, EventType::ChannelCreated, &channel_json(&channel)).await?;
///     Ok(channel)
/// }.scope_boxed()).await
/// ```
///
/// It writes the event (always: it is the workspace's events feed, `GET /v1/events`, and what
/// replays send again) and one pending delivery per destination of the workspace that is active
/// and subscribes to `event`, on a plan with webhooks. Delivery starts when the transaction
/// commits; a rollback discards the event with the change.
///
/// # Errors
/// Database errors, which should fail (roll back) the caller's transaction.
pub async fn record(
    conn: &mut AsyncPgConnection,
    workspace: WorkspaceId,
    event: EventType,
    data: &serde_json::Value,
) -> diesel::QueryResult<()> {
    record_at(conn, workspace, event, data, OffsetDateTime::now_utc()).await
}

/// [`record`] with the event's `timestamp` given (when the change carries its own time).
///
/// # Errors
/// Database errors.
pub async fn record_at(
    conn: &mut AsyncPgConnection,
    workspace: WorkspaceId,
    event: EventType,
    data: &serde_json::Value,
    at: OffsetDateTime,
) -> diesel::QueryResult<()> {
    let payload = envelope(event, at, workspace, data);
    let subjects = EventSubjects::of(event, data);
    diesel::sql_query(
        // The event is always kept (the workspace's feed and replays, issue 16); deliveries only
        // for the active destinations that subscribe, on a plan with webhooks. Its contact and
        // thread are kept beside it, so that erasing a contact finds its events by index.
        "WITH ev AS (
             INSERT INTO webhook_events (workspace_id, event_type, message_id, payload, contact_id, thread_id)
             VALUES ($1, $2, 'msg_' || replace(gen_random_uuid()::text, '-', ''), $3, $5, $6)
             RETURNING id, created_at
         ), subscribed AS (
             SELECT w.id FROM webhook_destinations w JOIN workspaces ws ON ws.id = w.workspace_id
             WHERE w.workspace_id = $1 AND w.active AND $2 = ANY (w.events)
               AND ws.plan = ANY ($4)
         )
         INSERT INTO webhook_deliveries (workspace_id, destination_id, event_id, next_attempt_at, created_at, updated_at)
         SELECT $1, s.id, ev.id, clock_timestamp(), ev.created_at, ev.created_at FROM ev CROSS JOIN subscribed s",
    )
    .bind::<BigInt, _>(workspace.0)
    .bind::<Text, _>(event.as_str())
    .bind::<Text, _>(&payload)
    // The plans the access policy includes webhooks in; below them nothing is queued.
    .bind::<diesel::sql_types::Array<Text>, _>(webhook_plans())
    .bind::<Nullable<BigInt>, _>(subjects.contact_id)
    .bind::<Nullable<BigInt>, _>(subjects.thread_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// The plans the access policy includes webhooks in; below them nothing is delivered.
fn webhook_plans() -> Vec<&'static str> {
    domain::access::plans_including(domain::access::WEBHOOKS_PLAN).into_iter().map(|p| p.as_str()).collect()
}

/// [`record`] for several changes of one type at once (a group commit's messages): one
/// statement for all of them, with the same result as calling [`record`] for each in order —
/// one event per change, event ids in the order of `data`, each event's deliveries due in that
/// order too.
///
/// # Errors
/// Database errors, which should fail (roll back) the caller's transaction.
pub async fn record_many(
    conn: &mut AsyncPgConnection,
    workspace: WorkspaceId,
    event: EventType,
    data: &[serde_json::Value],
) -> diesel::QueryResult<()> {
    if data.is_empty() {
        return Ok(());
    }
    let at = OffsetDateTime::now_utc();
    let payloads: Vec<String> = data.iter().map(|d| envelope(event, at, workspace, d)).collect();
    let subjects: Vec<EventSubjects> = data.iter().map(|d| EventSubjects::of(event, d)).collect();
    let contact_ids: Vec<Option<i64>> = subjects.iter().map(|s| s.contact_id).collect();
    let thread_ids: Vec<Option<i64>> = subjects.iter().map(|s| s.thread_id).collect();
    diesel::sql_query(
        "WITH ev AS (
             INSERT INTO webhook_events (workspace_id, event_type, message_id, payload, contact_id, thread_id)
             SELECT $1, $2, 'msg_' || replace(gen_random_uuid()::text, '-', ''), p.payload, p.contact_id, p.thread_id
             FROM unnest($3::text[], $5::bigint[], $6::bigint[]) WITH ORDINALITY AS p (payload, contact_id, thread_id, ord)
             ORDER BY p.ord
             RETURNING id, created_at
         ), subscribed AS (
             SELECT w.id FROM webhook_destinations w JOIN workspaces ws ON ws.id = w.workspace_id
             WHERE w.workspace_id = $1 AND w.active AND $2 = ANY (w.events)
               AND ws.plan = ANY ($4)
         )
         INSERT INTO webhook_deliveries (workspace_id, destination_id, event_id, next_attempt_at, created_at, updated_at)
         SELECT $1, s.id, ev.id, clock_timestamp(), ev.created_at, ev.created_at
         FROM ev CROSS JOIN subscribed s
         ORDER BY ev.id, s.id",
    )
    .bind::<BigInt, _>(workspace.0)
    .bind::<Text, _>(event.as_str())
    .bind::<diesel::sql_types::Array<Text>, _>(&payloads)
    .bind::<diesel::sql_types::Array<Text>, _>(webhook_plans())
    .bind::<diesel::sql_types::Array<Nullable<BigInt>>, _>(&contact_ids)
    .bind::<diesel::sql_types::Array<Nullable<BigInt>>, _>(&thread_ids)
    .execute(conn)
    .await?;
    Ok(())
}
