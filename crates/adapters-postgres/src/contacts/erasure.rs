//! Erasing a contact: the person's data goes from the contact, its messages and the stored events;
//! the rows the figures count stay.

use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Nullable, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::webhooks::EventType;
use domain::workspace::WorkspaceId;

use super::TxError;
use crate::schema::{contacts, threads};
use crate::webhooks::outbox;

#[derive(QueryableByName)]
struct Address {
    #[diesel(sql_type = Nullable<Text>)]
    phone: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    email: Option<String>,
}

/// Everything erasure does, in the caller's transaction (see
/// [`ContactRepository::erase`](domain::contacts::ContactRepository::erase)).
pub(super) async fn erase(conn: &mut AsyncPgConnection, ws: WorkspaceId, id: i64) -> Result<(), TxError> {
    let person: Address = diesel::sql_query(
        "SELECT phone, email FROM contacts WHERE workspace_id = $1 AND id = $2 AND erased_at IS NULL FOR UPDATE",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<BigInt, _>(id)
    .get_result(conn)
    .await
    .optional()?
    .ok_or(TxError::NotFound)?;
    let thread_ids: Vec<i64> = threads::table
        .filter(threads::workspace_id.eq(ws.0))
        .filter(threads::contact_id.eq(id))
        .select(threads::id)
        .load(conn)
        .await?;
    let thread_keys: Vec<String> = thread_ids.iter().map(i64::to_string).collect();
    // Contents go, rows stay: status, direction and times feed the rollups and analytics, and
    // the rollup triggers see no status change. Template parameters are message content too.
    diesel::sql_query(
        "UPDATE messages SET content = '',
                template = CASE WHEN template ? 'parameters' THEN jsonb_set(template, '{parameters}', '[]') ELSE template END
         WHERE workspace_id = $1 AND thread_id = ANY($2)",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<Array<BigInt>, _>(&thread_ids)
    .execute(conn)
    .await?;
    // Stored events are copies: a contact event's data becomes the id only (as in
    // contact.deleted), a message event's content is emptied, and what receivers answered to
    // those deliveries (which may echo the body) is dropped.
    diesel::sql_query(
        "WITH scrubbed AS (
             UPDATE webhook_events e SET payload = CASE
                 WHEN e.event_type LIKE 'contact.%'
                     THEN jsonb_set(e.payload::jsonb, '{data}', jsonb_build_object('id', $2::bigint))::text
                 ELSE jsonb_set(e.payload::jsonb, '{data,content}', '\"\"')::text END
             WHERE e.workspace_id = $1
               AND ((e.event_type LIKE 'contact.%' AND e.payload::jsonb #>> '{data,id}' = $2::text)
                 OR (e.event_type LIKE 'message.%' AND e.payload::jsonb #>> '{data,thread_id}' = ANY($3)))
             RETURNING e.id
         )
         UPDATE webhook_attempts a SET response_excerpt = ''
         FROM webhook_deliveries d JOIN scrubbed s ON s.id = d.event_id
         WHERE d.workspace_id = $1 AND a.workspace_id = $1 AND a.delivery_id = d.id",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<BigInt, _>(id)
    .bind::<Array<Text>, _>(&thread_keys)
    .execute(conn)
    .await?;
    // Whatever other copy of the phone or e-mail an event or a receiver's answer still holds.
    for address in [person.phone, person.email].into_iter().flatten() {
        diesel::sql_query(
            "UPDATE webhook_events SET payload = replace(payload, $2, '')
             WHERE workspace_id = $1 AND strpos(payload, $2) > 0",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<Text, _>(&address)
        .execute(conn)
        .await?;
        diesel::sql_query(
            "UPDATE webhook_attempts SET response_excerpt = replace(response_excerpt, $2, '')
             WHERE workspace_id = $1 AND strpos(response_excerpt, $2) > 0",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<Text, _>(&address)
        .execute(conn)
        .await?;
    }
    // The request fingerprints of the person's messages are digests of their content.
    diesel::sql_query(
        "DELETE FROM idempotency_keys WHERE workspace_id = $1
           AND message_id IN (SELECT id FROM messages WHERE workspace_id = $1 AND thread_id = ANY($2))",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<Array<BigInt>, _>(&thread_ids)
    .execute(conn)
    .await?;
    diesel::update(contacts::table.filter(contacts::workspace_id.eq(ws.0)).filter(contacts::id.eq(id)))
        .set((
            contacts::name.eq(None::<String>),
            contacts::phone.eq(None::<String>),
            contacts::email.eq(None::<String>),
            contacts::platform_user_id.eq(None::<String>),
            contacts::language.eq(None::<String>),
            contacts::note.eq(None::<String>),
            contacts::erased_at.eq(diesel::dsl::now),
            contacts::updated_at.eq(diesel::dsl::now),
        ))
        .execute(conn)
        .await?;
    outbox::record(conn, ws, EventType::ContactDeleted, &serde_json::json!({"id": id})).await?;
    Ok(())
}
