//! Erasing a contact: loads the facts [`plan_erasure`] decides on, inside the transaction and with
//! the contact locked, and applies the plan. Every statement finds its rows by id through an
//! index (the contact's threads, their messages, the events kept with their contact and thread
//! ids), so the work grows with the person's own history, never with the workspace's.

use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::audit::AuditContext;
use domain::contacts::{plan_erasure, ErasedMessage, ErasureFacts, StoredEvent, ERASED_REASON};
use domain::messaging::{Direction, MessageId, MessageStatus};
use domain::workspace::WorkspaceId;

use super::TxError;
use crate::schema::{contacts, messages, threads};
use crate::webhooks::outbox;

/// Everything erasure does, in the caller's transaction (see
/// [`ContactRepository::erase`](domain::contacts::ContactRepository::erase)).
pub(super) async fn erase(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    id: i64,
    audit: &AuditContext,
) -> Result<(), TxError> {
    contacts::table
        .filter(contacts::workspace_id.eq(ws.0))
        .filter(contacts::id.eq(id))
        .filter(contacts::erased_at.is_null())
        .select(contacts::id)
        .for_update()
        .first::<i64>(conn)
        .await
        .optional()?
        .ok_or(TxError::NotFound)?;
    let facts = load_facts(conn, ws, id).await?;
    let plan = plan_erasure(&facts, audit);

    let clear: Vec<i64> = plan.clear_messages.iter().map(|m| m.0).collect();
    // Contents go, rows stay: status, direction and times feed the rollups and analytics, and
    // the rollup triggers see no status change. Template parameters are message content too.
    diesel::sql_query(
        "UPDATE messages SET content = '',
                template = CASE WHEN template ? 'parameters' THEN jsonb_set(template, '{parameters}', '[]') ELSE template END
         WHERE workspace_id = $1 AND id = ANY($2)",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<Array<BigInt>, _>(&clear)
    .execute(conn)
    .await?;
    // After the contents are cleared, so that their `message.status_updated` carries `""`.
    for m in &plan.cancel_messages {
        crate::connectors::advance(
            conn,
            ws,
            m.0,
            MessageStatus::Failed,
            time::OffsetDateTime::now_utc(),
            Some(ERASED_REASON),
            None,
        )
        .await?;
    }
    let (ids, payloads): (Vec<i64>, Vec<String>) = plan.scrubbed_events.iter().cloned().unzip();
    diesel::sql_query(
        "UPDATE webhook_events e SET payload = v.payload
         FROM unnest($2::bigint[], $3::text[]) AS v(id, payload)
         WHERE e.workspace_id = $1 AND e.id = v.id",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<Array<BigInt>, _>(&ids)
    .bind::<Array<Text>, _>(&payloads)
    .execute(conn)
    .await?;
    // What receivers answered to those deliveries may echo the body.
    diesel::sql_query(
        "UPDATE webhook_attempts a SET response_excerpt = ''
         FROM webhook_deliveries d
         WHERE d.workspace_id = $1 AND d.event_id = ANY($2)
           AND a.workspace_id = $1 AND a.delivery_id = d.id AND a.response_excerpt <> ''",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<Array<BigInt>, _>(&plan.forget_answers_to)
    .execute(conn)
    .await?;
    // The request fingerprints of the person's messages are digests of their content.
    diesel::sql_query("DELETE FROM idempotency_keys WHERE workspace_id = $1 AND message_id = ANY($2)")
        .bind::<BigInt, _>(ws.0)
        .bind::<Array<BigInt>, _>(&clear)
        .execute(conn)
        .await?;
    diesel::update(contacts::table.filter(contacts::workspace_id.eq(ws.0)).filter(contacts::id.eq(id)))
        .set((
            contacts::name.eq(None::<String>),
            contacts::phone.eq(None::<String>),
            contacts::email.eq(None::<String>),
            contacts::platform_user_id.eq(None::<String>),
            contacts::country.eq(None::<String>),
            contacts::language.eq(None::<String>),
            contacts::note.eq(None::<String>),
            contacts::erased_at.eq(diesel::dsl::now),
            contacts::updated_at.eq(diesel::dsl::now),
        ))
        .execute(conn)
        .await?;
    outbox::record(conn, ws, time::OffsetDateTime::now_utc(), std::slice::from_ref(&plan.deleted_event)).await?;
    crate::audit::write(conn, std::slice::from_ref(&plan.audit), None).await?;
    Ok(())
}

/// The contact's threads, their messages and the stored events about the contact or its threads.
async fn load_facts(conn: &mut AsyncPgConnection, ws: WorkspaceId, id: i64) -> Result<ErasureFacts, TxError> {
    let threads: Vec<i64> = threads::table
        .filter(threads::workspace_id.eq(ws.0))
        .filter(threads::contact_id.eq(id))
        .select(threads::id)
        .load(conn)
        .await?;
    let rows: Vec<(i64, String, String)> = messages::table
        .filter(messages::workspace_id.eq(ws.0))
        .filter(messages::thread_id.eq_any(&threads))
        .select((messages::id, messages::direction, messages::status))
        .load(conn)
        .await?;
    let messages = rows
        .into_iter()
        .map(|(id, direction, status)| ErasedMessage {
            id: MessageId(id),
            direction: direction.parse().unwrap_or(Direction::Inbound),
            status: status.parse().unwrap_or(MessageStatus::Sent),
        })
        .collect();
    // Two index scans (`webhook_events_contact_idx`, `webhook_events_thread_idx`); samples are
    // made-up data and never carry a subject.
    let events: Vec<crate::events::EventBody> = diesel::sql_query(
        "SELECT id, event_type, payload FROM webhook_events WHERE workspace_id = $1 AND contact_id = $2
         UNION
         SELECT id, event_type, payload FROM webhook_events WHERE workspace_id = $1 AND thread_id = ANY($3)
         ORDER BY id",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<BigInt, _>(id)
    .bind::<Array<BigInt>, _>(&threads)
    .load(conn)
    .await?;
    Ok(ErasureFacts {
        workspace_id: ws,
        contact_id: id,
        threads,
        messages,
        events: events
            .into_iter()
            .map(|e| StoredEvent { id: e.id, event_type: e.event_type, payload: e.payload })
            .collect(),
    })
}
