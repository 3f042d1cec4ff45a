//! Storing outbound messages: one send in its own transaction, or a group of sends through one
//! channel in one transaction (the group commit).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::channels::ChannelId;
use domain::messaging::recipients::opens_conversation;
use domain::messaging::window::{admit, MessageTag};
use domain::messaging::{
    InsertMessageError, Message, MessageId, MessageRecord, NewOutboundMessage, Recipient, Stored, ThreadRef,
};
use domain::webhooks::DomainEvent;
use domain::workspace::WorkspaceId;
use time::OffsetDateTime;

use super::recipients::{
    addressed_by_phone, contacts_for_addresses, thread_for_address, threads_erased, threads_for_contacts, SendRefused,
    SendThread,
};
use super::{
    author_ai_agent, author_user, claim_key, existing_key, into_db, load_message, release_keys, MessageRow, TxError,
};
use crate::error::repo;
use crate::group_commit::Commit;
use crate::pool::Db;
use crate::schema::{idempotency_keys, messages, threads};
use crate::webhooks::outbox;

/// One send in a transaction of its own: a lone send, or one of a group whose shared transaction
/// failed (so that one bad send fails alone).
pub(super) async fn insert_one(
    db: &Db,
    ws: WorkspaceId,
    new: &NewOutboundMessage,
) -> Result<Stored, InsertMessageError> {
    let mut conn = db.conn().await.map_err(|e| InsertMessageError::Unknown(repo(e)))?;
    let result = conn
        .transaction::<_, TxError, _>(|conn| {
            async move {
                if let Some(key) = &new.idempotency {
                    if !claim_key(conn, ws, key).await? {
                        let earlier = existing_key(conn, ws, key).await?;
                        return match key.reuse_of(earlier.as_ref()).map_err(TxError::Refused)? {
                            Some(id) => {
                                let m = load_message(conn, ws, id.0).await.map_err(into_db)?;
                                m.map(|message| Stored { message, replayed: true })
                                    .ok_or(TxError::Db(diesel::result::Error::NotFound))
                            }
                            None => Err(TxError::Db(diesel::result::Error::NotFound)),
                        };
                    }
                }
                let thread = match &new.recipient {
                    Recipient::Thread(t) => {
                        let erased = threads_erased(conn, ws, &[t.0]).await?;
                        ThreadRef::addressable(*t, erased.get(&t.0).copied().unwrap_or(false))
                            .map_err(TxError::Refused)?;
                        SendThread { id: t.0, created: false, latest_inbound_at: None }
                    }
                    Recipient::Address(a) => match thread_for_address(conn, ws, new, a).await {
                        Ok(t) => t,
                        Err(SendRefused::Window(c)) => return Err(TxError::Window(c)),
                        Err(SendRefused::Db(e)) => return Err(TxError::Db(e)),
                    },
                };
                let thread_id = thread.id;
                let row: MessageRow = diesel::insert_into(messages::table)
                    .values((
                        messages::workspace_id.eq(ws.0),
                        messages::thread_id.eq(thread_id),
                        messages::channel_id.eq(new.channel_id.0),
                        messages::direction.eq("outbound"),
                        messages::sender_kind.eq(new.analytics_kind()),
                        messages::template.eq(new.template.as_ref().and_then(|t| serde_json::to_value(t).ok())),
                        messages::author_user_id.eq(author_user(new.sender)),
                        messages::author_ai_agent_id.eq(author_ai_agent(new.sender)),
                        messages::sender_type.eq(new.sender.kind()),
                        messages::sender_id.eq(new.sender.id()),
                        messages::platform_tag.eq(new.tag.map(MessageTag::platform_name)),
                        messages::content.eq(&new.content),
                        messages::status.eq("queued"),
                        messages::queued_at.eq(diesel::dsl::now),
                    ))
                    .returning(MessageRow::as_returning())
                    .get_result(conn)
                    .await?;
                let message = row.into_domain().map_err(into_db)?;
                crate::reports::record(conn, ws, thread_id, outbound_event(&message)).await?;
                // A thread created just now already has this message's time (both are `now()`).
                if !thread.created {
                    diesel::update(
                        threads::table.filter(threads::workspace_id.eq(ws.0)).filter(threads::id.eq(thread_id)),
                    )
                    .set((threads::last_message_at.eq(message.created_at), threads::updated_at.eq(diesel::dsl::now)))
                    .execute(conn)
                    .await?;
                }
                if let Some(key) = &new.idempotency {
                    diesel::update(
                        idempotency_keys::table
                            .filter(idempotency_keys::workspace_id.eq(ws.0))
                            .filter(idempotency_keys::key.eq(&key.key)),
                    )
                    .set(idempotency_keys::message_id.eq(message.id.0))
                    .execute(conn)
                    .await?;
                }
                let event = new.event(MessageRecord::from(message.clone()));
                outbox::record(conn, ws, time::OffsetDateTime::now_utc(), &[event]).await?;
                if domain::sla::counts_as_response(message.sender) {
                    let breaches =
                        crate::sla::tracking::on_responses(conn, ws, &[thread_id], message.created_at).await?;
                    crate::sla::tracking::announce(conn, ws, breaches).await?;
                }
                Ok(Stored { message, replayed: false })
            }
            .scope_boxed()
        })
        .await;
    result.map_err(|e| match e {
        TxError::Refused(refused) => refused,
        TxError::Window(c) => InsertMessageError::WindowClosed(c),
        TxError::Db(e) => InsertMessageError::Unknown(repo(e)),
    })
}

/// The storage side of the group commit of sends: one transaction for every send through one
/// channel that arrived while the previous one was in flight.
#[derive(Debug, Clone)]
pub(super) struct OutboundCommit {
    pub(super) db: Db,
}

#[async_trait]
impl Commit for OutboundCommit {
    type Key = (WorkspaceId, ChannelId);
    type Item = NewOutboundMessage;
    type Output = Stored;
    type Error = InsertMessageError;

    async fn run(
        &self,
        (ws, _): &(WorkspaceId, ChannelId),
        items: Vec<NewOutboundMessage>,
    ) -> Vec<Result<Stored, InsertMessageError>> {
        let ws = *ws;
        if items.len() == 1 {
            return vec![insert_one(&self.db, ws, &items[0]).await];
        }
        let grouped = match self.db.conn().await {
            Ok(mut conn) => {
                let items = &items;
                conn.transaction::<_, diesel::result::Error, _>(|c| insert_group(c, ws, items).scope_boxed()).await
            }
            Err(e) => {
                // Every send of the group gets the failure, still marked as the database being
                // out of reach when it is (503, not 500).
                return crate::error::repo_for_each(e, items.len())
                    .into_iter()
                    .map(|e| Err(InsertMessageError::Unknown(e)))
                    .collect();
            }
        };
        let outcomes = match grouped {
            Ok(outcomes) => outcomes,
            Err(e) => {
                // Nothing of the group was committed. Each send is made again on its own, so a
                // send that cannot be stored (its thread deleted meanwhile, say) fails alone.
                tracing::info!(error = %e, sends = items.len(), "a group of sends failed together; retrying them one by one");
                items.iter().map(|_| Outcome::Alone).collect()
            }
        };
        let mut results = Vec::with_capacity(items.len());
        for (item, outcome) in items.iter().zip(outcomes) {
            results.push(match outcome {
                Outcome::Done(r) => r,
                Outcome::Alone => insert_one(&self.db, ws, item).await,
            });
        }
        results
    }
}

/// What became of one send of a group.
pub(super) enum Outcome {
    /// Answered by the group's transaction (committed when the caller hears of it).
    Done(Result<Stored, InsertMessageError>),
    /// To be made in a transaction of its own after the group's (a second send with an
    /// idempotency key already used in the same group: it must see the first one committed).
    Alone,
}

/// The sends of one group, inside its transaction: the same rows and events, in the same order
/// per send, as [`insert_one`] for each, with one statement where several sends share work — the
/// messages in one insert (so the rollup triggers run once), their threads' activity in one
/// update, their `message.created` events in one statement.
pub(super) async fn insert_group(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    items: &[NewOutboundMessage],
) -> QueryResult<Vec<Outcome>> {
    let mut outcomes: Vec<Option<Outcome>> = items.iter().map(|_| None).collect();
    // Idempotency keys first, as insert_one does: a key already used answers from its message.
    let mut keys_seen = std::collections::HashSet::new();
    let mut claimed = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(key) = &item.idempotency else { continue };
        if !keys_seen.insert(key.key.as_str()) {
            outcomes[i] = Some(Outcome::Alone);
            continue;
        }
        if claim_key(conn, ws, key).await? {
            claimed.push(i);
        } else {
            let earlier = existing_key(conn, ws, key).await?;
            let answer = match key.reuse_of(earlier.as_ref()) {
                Err(refused) => Err(refused),
                Ok(Some(MessageId(id))) => match load_message(conn, ws, id).await {
                    Ok(Some(message)) => Ok(Stored { message, replayed: true }),
                    Ok(None) => Err(InsertMessageError::Unknown(repo(anyhow::anyhow!("message {id} vanished")))),
                    Err(e) => Err(InsertMessageError::Unknown(e)),
                },
                Ok(None) => {
                    Err(InsertMessageError::Unknown(repo(anyhow::anyhow!("idempotency key without its message"))))
                }
            };
            outcomes[i] = Some(Outcome::Done(answer));
        }
    }
    // Recipients: each distinct address once, in a fixed order so that concurrent groups (of
    // other instances) take contact and thread locks in the same order.
    let mut addresses: Vec<(ChannelId, &str)> = items
        .iter()
        .zip(&outcomes)
        .filter(|(_, o)| o.is_none())
        .filter_map(|(item, _)| match &item.recipient {
            Recipient::Address(a) => Some((item.channel_id, a.as_str())),
            Recipient::Thread(_) => None,
        })
        .collect();
    addresses.sort_unstable();
    addresses.dedup();
    // Set-wise per channel: one statement finds the known contacts, one inserts the new ones, one
    // finds the contacts' threads, one creates the missing threads (a group of sends to different
    // new recipients costs a few statements, not a few per recipient).
    let mut threads_by_address: std::collections::HashMap<(ChannelId, &str), SendThread> =
        std::collections::HashMap::new();
    let mut channels: Vec<ChannelId> = addresses.iter().map(|(c, _)| *c).collect();
    channels.dedup();
    // Only a template send may open a conversation: the recipients of the others are looked up,
    // never created, and their windows judged below.
    let opening: std::collections::HashSet<(ChannelId, &str)> = items
        .iter()
        .zip(&outcomes)
        .filter(|(item, o)| o.is_none() && opens_conversation(item.need))
        .filter_map(|(item, _)| match &item.recipient {
            Recipient::Address(a) => Some((item.channel_id, a.as_str())),
            Recipient::Thread(_) => None,
        })
        .collect();
    for channel_id in channels {
        let of_channel: Vec<&str> = addresses.iter().filter(|(c, _)| *c == channel_id).map(|(_, a)| *a).collect();
        let creatable: std::collections::HashSet<&str> =
            of_channel.iter().copied().filter(|a| opening.contains(&(channel_id, *a))).collect();
        let by_phone = addressed_by_phone(conn, ws, channel_id).await?;
        let contact_of = contacts_for_addresses(conn, ws, by_phone, &of_channel, &creatable).await?;
        let mut contact_ids: Vec<i64> = contact_of.values().copied().collect();
        contact_ids.sort_unstable();
        contact_ids.dedup();
        let creatable: std::collections::HashSet<i64> =
            creatable.iter().filter_map(|a| contact_of.get(*a).copied()).collect();
        let thread_of = threads_for_contacts(conn, ws, channel_id, &contact_ids, &creatable).await?;
        for address in of_channel {
            // No thread: a recipient that only free text addresses and that has none yet.
            if let Some(thread) = contact_of.get(address).and_then(|c| thread_of.get(c)) {
                threads_by_address.insert((channel_id, address), *thread);
            }
        }
    }
    for (i, item) in items.iter().enumerate() {
        let Recipient::Address(a) = &item.recipient else { continue };
        if outcomes[i].is_some() {
            continue;
        }
        let latest = threads_by_address.get(&(item.channel_id, a.as_str())).and_then(|t| t.latest_inbound_at);
        if let Err(closed) = admit(item.need, latest, item.at) {
            outcomes[i] = Some(Outcome::Done(Err(InsertMessageError::WindowClosed(closed))));
        }
    }
    // Sends to threads: their contacts' erasure read again under the contacts' locks.
    let mut to_threads: Vec<i64> = items
        .iter()
        .zip(&outcomes)
        .filter(|(_, o)| o.is_none())
        .filter_map(|(item, _)| match &item.recipient {
            Recipient::Thread(t) => Some(t.0),
            Recipient::Address(_) => None,
        })
        .collect();
    to_threads.sort_unstable();
    to_threads.dedup();
    if !to_threads.is_empty() {
        let erased = threads_erased(conn, ws, &to_threads).await?;
        for (i, item) in items.iter().enumerate() {
            let Recipient::Thread(t) = &item.recipient else { continue };
            if outcomes[i].is_none() {
                if let Err(refused) = ThreadRef::addressable(*t, erased.get(&t.0).copied().unwrap_or(false)) {
                    outcomes[i] = Some(Outcome::Done(Err(refused)));
                }
            }
        }
    }
    // A refused send stores nothing, its idempotency key neither: a retry with the key is a new
    // attempt, as it is after a refusal of a lone send (whose transaction rolls back).
    let refused_keys: Vec<&str> = claimed
        .iter()
        .filter(|i| matches!(outcomes[**i], Some(Outcome::Done(Err(_)))))
        .filter_map(|i| items[*i].idempotency.as_ref().map(|k| k.key.as_str()))
        .collect();
    if !refused_keys.is_empty() {
        release_keys(conn, ws, &refused_keys).await?;
    }
    let pending: Vec<(usize, SendThread)> = items
        .iter()
        .enumerate()
        .filter(|(i, _)| outcomes[*i].is_none())
        .map(|(i, item)| match &item.recipient {
            Recipient::Thread(t) => Ok((i, SendThread { id: t.0, created: false, latest_inbound_at: None })),
            Recipient::Address(a) => threads_by_address
                .get(&(item.channel_id, a.as_str()))
                .map(|t| (i, *t))
                .ok_or_else(|| into_db(repo(anyhow::anyhow!("no thread resolved for a recipient")))),
        })
        .collect::<QueryResult<_>>()?;
    if !pending.is_empty() {
        let rows: Vec<_> = pending
            .iter()
            .map(|&(i, thread)| {
                let new = &items[i];
                (
                    messages::workspace_id.eq(ws.0),
                    messages::thread_id.eq(thread.id),
                    messages::channel_id.eq(new.channel_id.0),
                    messages::direction.eq("outbound"),
                    messages::sender_kind.eq(new.analytics_kind()),
                    messages::template.eq(new.template.as_ref().and_then(|t| serde_json::to_value(t).ok())),
                    messages::author_user_id.eq(author_user(new.sender)),
                    messages::author_ai_agent_id.eq(author_ai_agent(new.sender)),
                    messages::sender_type.eq(new.sender.kind()),
                    messages::sender_id.eq(new.sender.id()),
                    messages::platform_tag.eq(new.tag.map(MessageTag::platform_name)),
                    messages::content.eq(new.content.as_str()),
                    messages::status.eq("queued"),
                    messages::queued_at.eq(diesel::dsl::now),
                )
            })
            .collect();
        // RETURNING gives the rows in the order of VALUES, which is the order of `pending`.
        let inserted: Vec<MessageRow> = diesel::insert_into(messages::table)
            .values(rows)
            .returning(MessageRow::as_returning())
            .get_results(conn)
            .await?;
        if inserted.len() != pending.len() {
            return Err(into_db(repo(anyhow::anyhow!("{} rows for {} messages", inserted.len(), pending.len()))));
        }
        let stored: Vec<Message> =
            inserted.into_iter().map(MessageRow::into_domain).collect::<Result<_, _>>().map_err(into_db)?;
        // Every message of the transaction has the same created_at (now()), so one update sets
        // each thread's activity to its newest message's time, as insert_one does per message;
        // the threads created in this transaction already have it.
        let mut thread_ids: Vec<i64> = pending.iter().filter(|(_, t)| !t.created).map(|(_, t)| t.id).collect();
        thread_ids.sort_unstable();
        thread_ids.dedup();
        if !thread_ids.is_empty() {
            let newest = stored.iter().map(|m| m.created_at).max().unwrap_or_else(OffsetDateTime::now_utc);
            diesel::update(
                threads::table.filter(threads::workspace_id.eq(ws.0)).filter(threads::id.eq_any(&thread_ids)),
            )
            .set((threads::last_message_at.eq(newest), threads::updated_at.eq(diesel::dsl::now)))
            .execute(conn)
            .await?;
        }
        let keyed: Vec<(&str, i64)> = pending
            .iter()
            .zip(&stored)
            .filter_map(|(&(i, _), m)| items[i].idempotency.as_ref().map(|k| (k.key.as_str(), m.id.0)))
            .collect();
        if !keyed.is_empty() {
            diesel::sql_query(
                "UPDATE idempotency_keys k SET message_id = v.message_id
                 FROM unnest($2::text[], $3::bigint[]) AS v (key, message_id)
                 WHERE k.workspace_id = $1 AND k.key = v.key",
            )
            .bind::<BigInt, _>(ws.0)
            .bind::<diesel::sql_types::Array<Text>, _>(keyed.iter().map(|(k, _)| *k).collect::<Vec<_>>())
            .bind::<diesel::sql_types::Array<BigInt>, _>(keyed.iter().map(|(_, id)| *id).collect::<Vec<_>>())
            .execute(conn)
            .await?;
        }
        for m in &stored {
            crate::reports::record(conn, ws, m.thread_id.0, outbound_event(m)).await?;
        }
        let events: Vec<DomainEvent> =
            pending.iter().zip(&stored).map(|(&(i, _), m)| items[i].event(MessageRecord::from(m.clone()))).collect();
        outbox::record(conn, ws, time::OffsetDateTime::now_utc(), &events).await?;
        let responded: Vec<i64> =
            stored.iter().filter(|m| domain::sla::counts_as_response(m.sender)).map(|m| m.thread_id.0).collect();
        if !responded.is_empty() {
            let at = stored.iter().map(|m| m.created_at).max().unwrap_or_else(OffsetDateTime::now_utc);
            let breaches = crate::sla::tracking::on_responses(conn, ws, &responded, at).await?;
            crate::sla::tracking::announce(conn, ws, breaches).await?;
        }
        for (&(i, _), message) in pending.iter().zip(stored) {
            outcomes[i] = Some(Outcome::Done(Ok(Stored { message, replayed: false })));
        }
    }
    Ok(outcomes.into_iter().map(|o| o.unwrap_or(Outcome::Alone)).collect())
}

/// What an outbound message is to the conversation reports.
fn outbound_event(m: &Message) -> domain::reports::ConversationEvent {
    domain::reports::ConversationEvent::Outbound { at: m.created_at, by: domain::reports::Responder::of(m.sender) }
}
