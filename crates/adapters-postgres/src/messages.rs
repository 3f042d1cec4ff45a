//! Messages and the threads and contacts they create.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::channels::ChannelId;
use domain::common::page::{Page, PageRequest};
use domain::messaging::{
    Direction, IdempotencyKey, InsertMessageError, Message, MessageFilter, MessageId, MessageRepository, MessageStatus,
    NewOutboundMessage, Recipient, Stored, ThreadId, ThreadRef,
};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::group_commit::{Commit, GroupCommit};
use crate::pool::Db;
use crate::rfc3339;
use crate::schema::{channels, contacts, idempotency_keys, messages, threads};
use crate::webhooks::outbox;
use domain::webhooks::EventType;

/// [`MessageRepository`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgMessageRepository {
    db: Db,
    /// Sends to one recipient that arrive while one of its transactions is in flight share the
    /// next one (docs/benchmarks.md, "Sending messages").
    sends: GroupCommit<OutboundCommit>,
}

impl PgMessageRepository {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self { sends: GroupCommit::new(OutboundCommit { db: db.clone() }), db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = messages)]
struct MessageRow {
    id: i64,
    channel_id: i64,
    thread_id: i64,
    direction: String,
    content: String,
    status: String,
    created_at: OffsetDateTime,
}

impl MessageRow {
    fn into_domain(self) -> Result<Message, RepoError> {
        let bad = |m: String| repo(anyhow::anyhow!("stored message {}: {m}", self.id));
        Ok(Message {
            id: MessageId(self.id),
            channel_id: ChannelId(self.channel_id),
            thread_id: ThreadId(self.thread_id),
            direction: self.direction.parse::<Direction>().map_err(|e| bad(e.message))?,
            status: self.status.parse::<MessageStatus>().map_err(|e| bad(e.message))?,
            content: self.content,
            created_at: self.created_at,
        })
    }
}

/// The event payload of a message: the same record the API returns.
pub fn message_json(m: &Message) -> serde_json::Value {
    serde_json::json!({
        "id": m.id.0,
        "channel_id": m.channel_id.0,
        "thread_id": m.thread_id.0,
        "direction": m.direction.as_str(),
        "content": m.content,
        "status": m.status.as_str(),
        "created_at": rfc3339(m.created_at),
    })
}

enum TxError {
    Mismatch,
    Db(diesel::result::Error),
}

impl From<diesel::result::Error> for TxError {
    fn from(e: diesel::result::Error) -> Self {
        TxError::Db(e)
    }
}

fn into_db(e: RepoError) -> diesel::result::Error {
    diesel::result::Error::QueryBuilderError(e.0.into())
}

async fn load_message(conn: &mut AsyncPgConnection, ws: WorkspaceId, id: i64) -> Result<Option<Message>, RepoError> {
    let row: Option<MessageRow> = messages::table
        .filter(messages::workspace_id.eq(ws.0))
        .filter(messages::id.eq(id))
        .select(MessageRow::as_select())
        .first(conn)
        .await
        .optional()
        .map_err(repo)?;
    row.map(MessageRow::into_domain).transpose()
}

/// Keys older than this are forgotten.
const IDEMPOTENCY_HOURS: i64 = 24;

fn idempotency_cutoff() -> OffsetDateTime {
    OffsetDateTime::now_utc() - time::Duration::hours(IDEMPOTENCY_HOURS)
}

async fn existing_key(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    key: &IdempotencyKey,
) -> diesel::QueryResult<Option<(Vec<u8>, Option<i64>)>> {
    idempotency_keys::table
        .filter(idempotency_keys::workspace_id.eq(ws.0))
        .filter(idempotency_keys::key.eq(&key.key))
        .filter(idempotency_keys::created_at.gt(idempotency_cutoff()))
        .select((idempotency_keys::fingerprint, idempotency_keys::message_id))
        .first(conn)
        .await
        .optional()
}

/// Whether contacts on this channel are found by phone (WhatsApp) or by platform user id.
async fn addressed_by_phone(conn: &mut AsyncPgConnection, ws: WorkspaceId, channel_id: ChannelId) -> QueryResult<bool> {
    let channel_type: String = channels::table
        .filter(channels::workspace_id.eq(ws.0))
        .filter(channels::id.eq(channel_id.0))
        .select(channels::channel_type)
        .first(conn)
        .await?;
    Ok(channel_type == "whatsapp")
}

#[derive(QueryableByName)]
struct InsertedContact {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// The contact with this address (a phone for WhatsApp, a platform user id otherwise), created
/// with `contact.created` when new.
///
/// Concurrent first sends to one address race to create it. The insert is `ON CONFLICT DO
/// NOTHING` on the address's unique index: a loser waits for the winner to commit, inserts
/// nothing and then reads the winner's row (a new statement, so a new snapshot that has it). So
/// exactly one contact and one `contact.created` exist, and no caller sees a unique violation.
async fn contact_for_address(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    by_phone: bool,
    address: &str,
) -> QueryResult<i64> {
    let (column, target) = if by_phone {
        ("phone", "(workspace_id, phone) WHERE phone IS NOT NULL")
    } else {
        ("platform_user_id", "(workspace_id, platform_user_id) WHERE platform_user_id IS NOT NULL")
    };
    // The row can vanish between the conflict and the read (a contact erased meanwhile): then
    // the insert is simply tried again.
    for _ in 0..3 {
        if let Some(id) = find_contact(conn, ws, by_phone, address).await? {
            return Ok(id);
        }
        let inserted: Option<InsertedContact> = diesel::sql_query(format!(
            "INSERT INTO contacts (workspace_id, {column}, first_contacted_at) VALUES ($1, $2, now())
             ON CONFLICT {target} DO NOTHING
             RETURNING id"
        ))
        .bind::<BigInt, _>(ws.0)
        .bind::<Text, _>(address)
        .get_result(conn)
        .await
        .optional()?;
        if let Some(c) = inserted {
            let data = crate::contacts::record(conn, ws, c.id).await?;
            outbox::record(conn, ws, EventType::ContactCreated, &data).await?;
            return Ok(c.id);
        }
    }
    Err(diesel::result::Error::NotFound)
}

async fn find_contact(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    by_phone: bool,
    address: &str,
) -> QueryResult<Option<i64>> {
    let q = contacts::table.filter(contacts::workspace_id.eq(ws.0)).select(contacts::id).into_boxed();
    let q =
        if by_phone { q.filter(contacts::phone.eq(address)) } else { q.filter(contacts::platform_user_id.eq(address)) };
    q.first(conn).await.optional()
}

async fn latest_thread(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    contact_id: i64,
    channel_id: ChannelId,
) -> QueryResult<Option<i64>> {
    threads::table
        .filter(threads::workspace_id.eq(ws.0))
        .filter(threads::contact_id.eq(contact_id))
        .filter(threads::channel_id.eq(channel_id.0))
        .order(threads::id.desc())
        .select(threads::id)
        .first(conn)
        .await
        .optional()
}

/// The contact's most recent thread on the channel, or a new one (with `thread.created`).
///
/// Threads have no unique key (a contact may have several on a channel), so concurrent first
/// sends are serialised on the contact's row instead: only when no thread exists, the row is
/// locked (`FOR NO KEY UPDATE`, which does not block the foreign-key checks of other inserts)
/// and the lookup repeated, so the second of two racing senders finds the first one's thread.
/// Inbound messages update the same row before they look for a thread, so they take part too.
pub(crate) async fn thread_for_contact(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    contact_id: i64,
    channel_id: ChannelId,
) -> QueryResult<i64> {
    if let Some(id) = latest_thread(conn, ws, contact_id, channel_id).await? {
        return Ok(id);
    }
    contacts::table
        .filter(contacts::workspace_id.eq(ws.0))
        .filter(contacts::id.eq(contact_id))
        .select(contacts::id)
        .for_no_key_update()
        .first::<i64>(conn)
        .await?;
    if let Some(id) = latest_thread(conn, ws, contact_id, channel_id).await? {
        return Ok(id);
    }
    let id: i64 = diesel::insert_into(threads::table)
        .values((
            threads::workspace_id.eq(ws.0),
            threads::contact_id.eq(contact_id),
            threads::channel_id.eq(channel_id.0),
            // The message that needs the thread is inserted next in this transaction, with
            // `created_at = now()`, which sets this again: the same value, so `thread.created`
            // carries the record as it is once the transaction commits.
            threads::last_message_at.eq(diesel::dsl::now),
        ))
        .returning(threads::id)
        .get_result(conn)
        .await?;
    let thread = crate::threads::load(conn, ws, id, false).await?.ok_or(diesel::result::Error::NotFound)?;
    let data = crate::threads::thread_json(&thread);
    outbox::record(conn, ws, EventType::ThreadCreated, &data).await?;
    Ok(id)
}

/// The thread for an address on a channel: its contact found or created, then the contact's most
/// recent thread on the channel, or a new one.
async fn thread_for_address(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    channel_id: ChannelId,
    address: &str,
) -> QueryResult<i64> {
    let by_phone = addressed_by_phone(conn, ws, channel_id).await?;
    let contact_id = contact_for_address(conn, ws, by_phone, address).await?;
    thread_for_contact(conn, ws, contact_id, channel_id).await
}

#[derive(QueryableByName)]
struct AddressedContact {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    address: String,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
}

/// [`contact_for_address`] for several addresses (sorted, distinct) at once: the contacts by
/// address, the new ones created with one `contact.created` each. The same race rules: the
/// insert is `ON CONFLICT DO NOTHING` (in address order, so concurrent groups take the unique
/// index's locks in the same order), and the contacts a concurrent transaction created are read
/// after it committed.
async fn contacts_for_addresses(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    by_phone: bool,
    addresses: &[&str],
) -> QueryResult<std::collections::HashMap<String, i64>> {
    let (column, target) = if by_phone {
        ("phone", "(workspace_id, phone) WHERE phone IS NOT NULL")
    } else {
        ("platform_user_id", "(workspace_id, platform_user_id) WHERE platform_user_id IS NOT NULL")
    };
    let find = |wanted: Vec<&str>| {
        diesel::sql_query(format!(
            "SELECT id, {column} AS address, created_at FROM contacts WHERE workspace_id = $1 AND {column} = ANY ($2)"
        ))
        .bind::<BigInt, _>(ws.0)
        .bind::<diesel::sql_types::Array<Text>, _>(wanted.into_iter().map(str::to_owned).collect::<Vec<_>>())
    };
    let mut found: std::collections::HashMap<String, i64> =
        find(addresses.to_vec()).load::<AddressedContact>(conn).await?.into_iter().map(|c| (c.address, c.id)).collect();
    let missing: Vec<&str> = addresses.iter().copied().filter(|a| !found.contains_key(*a)).collect();
    if missing.is_empty() {
        return Ok(found);
    }
    let mut inserted: Vec<AddressedContact> = diesel::sql_query(format!(
        "INSERT INTO contacts (workspace_id, {column}, first_contacted_at)
         SELECT $1, u.address, now() FROM unnest($2::text[]) WITH ORDINALITY AS u (address, n) ORDER BY u.n
         ON CONFLICT {target} DO NOTHING
         RETURNING id, {column} AS address, created_at"
    ))
    .bind::<BigInt, _>(ws.0)
    .bind::<diesel::sql_types::Array<Text>, _>(missing.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>())
    .load(conn)
    .await?;
    inserted.sort_unstable_by_key(|c| c.id);
    let events: Vec<serde_json::Value> = inserted
        .iter()
        .map(|c| {
            let (phone, platform_user_id) =
                if by_phone { (Some(c.address.as_str()), None) } else { (None, Some(c.address.as_str())) };
            serde_json::json!({
                "id": c.id, "name": null, "phone": phone, "email": null, "platform_user_id": platform_user_id,
                "created_at": rfc3339(c.created_at),
            })
        })
        .collect();
    outbox::record_many(conn, ws, EventType::ContactCreated, &events).await?;
    found.extend(inserted.into_iter().map(|c| (c.address, c.id)));
    // Those another transaction created first: its commit was waited for, a new statement sees it.
    let raced: Vec<&str> = missing.into_iter().filter(|a| !found.contains_key(*a)).collect();
    if !raced.is_empty() {
        let more = find(raced.clone()).load::<AddressedContact>(conn).await?;
        if more.len() != raced.len() {
            // Erased meanwhile: the group fails and each send is made alone (which tries again).
            return Err(diesel::result::Error::NotFound);
        }
        found.extend(more.into_iter().map(|c| (c.address, c.id)));
    }
    Ok(found)
}

#[derive(QueryableByName)]
struct ContactThread {
    #[diesel(sql_type = BigInt)]
    contact_id: i64,
    #[diesel(sql_type = BigInt)]
    id: i64,
}

#[derive(QueryableByName)]
struct NewThread {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    contact_id: i64,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
}

/// [`thread_for_contact`] for several contacts (sorted, distinct) on one channel: each one's most
/// recent thread, the missing ones created (with `thread.created`) under the contacts' row locks,
/// taken in id order, with the lookup repeated under them.
async fn threads_for_contacts(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    channel_id: ChannelId,
    contact_ids: &[i64],
) -> QueryResult<std::collections::HashMap<i64, i64>> {
    async fn latest(
        conn: &mut AsyncPgConnection,
        ws: WorkspaceId,
        channel_id: ChannelId,
        contact_ids: &[i64],
    ) -> QueryResult<Vec<ContactThread>> {
        diesel::sql_query(
            "SELECT DISTINCT ON (contact_id) contact_id, id FROM threads
             WHERE workspace_id = $1 AND channel_id = $2 AND contact_id = ANY ($3)
             ORDER BY contact_id, id DESC",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<BigInt, _>(channel_id.0)
        .bind::<diesel::sql_types::Array<BigInt>, _>(contact_ids)
        .load(conn)
        .await
    }
    let mut found: std::collections::HashMap<i64, i64> =
        latest(conn, ws, channel_id, contact_ids).await?.into_iter().map(|t| (t.contact_id, t.id)).collect();
    let missing: Vec<i64> = contact_ids.iter().copied().filter(|c| !found.contains_key(c)).collect();
    if missing.is_empty() {
        return Ok(found);
    }
    let locked = diesel::sql_query(
        "SELECT id FROM contacts WHERE workspace_id = $1 AND id = ANY ($2) ORDER BY id FOR NO KEY UPDATE",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<diesel::sql_types::Array<BigInt>, _>(&missing)
    .execute(conn)
    .await?;
    if locked != missing.len() {
        return Err(diesel::result::Error::NotFound);
    }
    found.extend(latest(conn, ws, channel_id, &missing).await?.into_iter().map(|t| (t.contact_id, t.id)));
    let create: Vec<i64> = missing.into_iter().filter(|c| !found.contains_key(c)).collect();
    if create.is_empty() {
        return Ok(found);
    }
    let mut created: Vec<NewThread> = diesel::sql_query(
        "INSERT INTO threads (workspace_id, contact_id, channel_id)
         SELECT $1, u.contact_id, $2 FROM unnest($3::bigint[]) WITH ORDINALITY AS u (contact_id, n) ORDER BY u.n
         RETURNING id, contact_id, status, created_at",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<BigInt, _>(channel_id.0)
    .bind::<diesel::sql_types::Array<BigInt>, _>(&create)
    .load(conn)
    .await?;
    created.sort_unstable_by_key(|t| t.id);
    let events: Vec<serde_json::Value> = created
        .iter()
        .map(|t| {
            serde_json::json!({
                "id": t.id, "channel_id": channel_id.0, "contact_id": t.contact_id, "status": t.status,
                "unread_count": 0, "assignee": null, "created_at": rfc3339(t.created_at),
            })
        })
        .collect();
    outbox::record_many(conn, ws, EventType::ThreadCreated, &events).await?;
    found.extend(created.into_iter().map(|t| (t.contact_id, t.id)));
    Ok(found)
}

#[async_trait]
impl MessageRepository for PgMessageRepository {
    async fn list(&self, ws: WorkspaceId, f: MessageFilter, page: PageRequest) -> Result<Page<Message>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let mut q = messages::table
            .filter(messages::workspace_id.eq(ws.0))
            .select(MessageRow::as_select())
            .order(messages::id.desc())
            .limit(page.fetch())
            .into_boxed();
        if let Some(after) = page.after {
            q = q.filter(messages::id.lt(after));
        }
        if let Some(c) = f.channel_id {
            q = q.filter(messages::channel_id.eq(c.0));
        }
        if let Some(t) = f.thread_id {
            q = q.filter(messages::thread_id.eq(t.0));
        }
        if let Some(s) = f.status {
            q = q.filter(messages::status.eq(s.as_str()));
        }
        if let Some(d) = f.direction {
            q = q.filter(messages::direction.eq(d.as_str()));
        }
        if let Some(since) = f.since {
            q = q.filter(messages::created_at.ge(since));
        }
        if let Some(until) = f.until {
            q = q.filter(messages::created_at.lt(until));
        }
        let rows: Vec<MessageRow> = q.load(&mut conn).await.map_err(repo)?;
        let items = rows.into_iter().map(MessageRow::into_domain).collect::<Result<Vec<_>, _>>()?;
        Ok(Page::from_rows(items, page, |m| m.id.0))
    }

    async fn find(&self, ws: WorkspaceId, id: MessageId) -> Result<Option<Message>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        load_message(&mut conn, ws, id.0).await
    }

    async fn find_thread(&self, ws: WorkspaceId, id: ThreadId) -> Result<Option<ThreadRef>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<(i64, i64)> = threads::table
            .filter(threads::workspace_id.eq(ws.0))
            .filter(threads::id.eq(id.0))
            .select((threads::id, threads::channel_id))
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        Ok(row.map(|(id, channel_id)| ThreadRef { id: ThreadId(id), channel_id: ChannelId(channel_id) }))
    }

    async fn replay(&self, ws: WorkspaceId, key: &IdempotencyKey) -> Result<Option<Message>, InsertMessageError> {
        let mut conn = self.db.conn().await.map_err(|e| InsertMessageError::Unknown(repo(e)))?;
        match existing_key(&mut conn, ws, key).await.map_err(|e| InsertMessageError::Unknown(repo(e)))? {
            None | Some((_, None)) => Ok(None),
            Some((fp, Some(_))) if fp != key.fingerprint => Err(InsertMessageError::IdempotencyMismatch),
            Some((_, Some(id))) => Ok(load_message(&mut conn, ws, id).await?),
        }
    }

    async fn insert_outbound(&self, ws: WorkspaceId, new: &NewOutboundMessage) -> Result<Stored, InsertMessageError> {
        // Grouped per channel: sends to one recipient write its one thread row, and would queue
        // on its lock unless they share a transaction; sends to different recipients share the
        // statements (their new contacts and threads are created set-wise).
        let stored = self.sends.call((ws, new.channel_id), new.clone()).await?;
        if !stored.replayed {
            // Committed: this instance's dispatchers and delivery loops look at once.
            self.db.wake().outbound_committed();
        }
        Ok(stored)
    }
}

/// One send in a transaction of its own: a lone send, or one of a group whose shared transaction
/// failed (so that one bad send fails alone).
async fn insert_one(db: &Db, ws: WorkspaceId, new: &NewOutboundMessage) -> Result<Stored, InsertMessageError> {
    let mut conn = db.conn().await.map_err(|e| InsertMessageError::Unknown(repo(e)))?;
    let result = conn
        .transaction::<_, TxError, _>(|conn| {
            async move {
                if let Some(key) = &new.idempotency {
                    diesel::delete(idempotency_keys::table)
                        .filter(idempotency_keys::workspace_id.eq(ws.0))
                        .filter(idempotency_keys::key.eq(&key.key))
                        .filter(idempotency_keys::created_at.le(idempotency_cutoff()))
                        .execute(conn)
                        .await?;
                    // Waits for a concurrent request with the same key to commit, then does nothing.
                    let inserted = diesel::insert_into(idempotency_keys::table)
                        .values((
                            idempotency_keys::workspace_id.eq(ws.0),
                            idempotency_keys::key.eq(&key.key),
                            idempotency_keys::fingerprint.eq(key.fingerprint.to_vec()),
                        ))
                        .on_conflict_do_nothing()
                        .execute(conn)
                        .await?;
                    if inserted == 0 {
                        return match existing_key(conn, ws, key).await? {
                            Some((fp, _)) if fp != key.fingerprint => Err(TxError::Mismatch),
                            Some((_, Some(id))) => {
                                let m = load_message(conn, ws, id).await.map_err(into_db)?;
                                m.map(|message| Stored { message, replayed: true })
                                    .ok_or(TxError::Db(diesel::result::Error::NotFound))
                            }
                            _ => Err(TxError::Db(diesel::result::Error::NotFound)),
                        };
                    }
                }
                let thread_id = match &new.recipient {
                    Recipient::Thread(t) => t.0,
                    Recipient::Address(a) => thread_for_address(conn, ws, new.channel_id, a).await?,
                };
                let row: MessageRow = diesel::insert_into(messages::table)
                    .values((
                        messages::workspace_id.eq(ws.0),
                        messages::thread_id.eq(thread_id),
                        messages::channel_id.eq(new.channel_id.0),
                        messages::direction.eq("outbound"),
                        messages::sender_kind.eq(if new.template.is_some() { "template" } else { "human" }),
                        messages::template.eq(new.template.as_ref().and_then(|t| serde_json::to_value(t).ok())),
                        messages::author_user_id.eq(new.author.map(|u| u.0)),
                        messages::content.eq(&new.content),
                        messages::status.eq("queued"),
                        messages::queued_at.eq(diesel::dsl::now),
                    ))
                    .returning(MessageRow::as_returning())
                    .get_result(conn)
                    .await?;
                let message = row.into_domain().map_err(into_db)?;
                diesel::update(threads::table.filter(threads::workspace_id.eq(ws.0)).filter(threads::id.eq(thread_id)))
                    .set((threads::last_message_at.eq(message.created_at), threads::updated_at.eq(diesel::dsl::now)))
                    .execute(conn)
                    .await?;
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
                outbox::record(conn, ws, EventType::MessageCreated, &message_json(&message)).await?;
                Ok(Stored { message, replayed: false })
            }
            .scope_boxed()
        })
        .await;
    result.map_err(|e| match e {
        TxError::Mismatch => InsertMessageError::IdempotencyMismatch,
        TxError::Db(e) => InsertMessageError::Unknown(repo(e)),
    })
}

/// The storage side of the group commit of sends: one transaction for every send through one
/// channel that arrived while the previous one was in flight.
#[derive(Debug, Clone)]
struct OutboundCommit {
    db: Db,
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
                return items.iter().map(|_| Err(InsertMessageError::Unknown(repo(anyhow::anyhow!("{e}"))))).collect()
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
enum Outcome {
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
async fn insert_group(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    items: &[NewOutboundMessage],
) -> QueryResult<Vec<Outcome>> {
    let mut outcomes: Vec<Option<Outcome>> = items.iter().map(|_| None).collect();
    // Idempotency keys first, as insert_one does: a key already used answers from its message.
    let mut keys_seen = std::collections::HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let Some(key) = &item.idempotency else { continue };
        if !keys_seen.insert(key.key.as_str()) {
            outcomes[i] = Some(Outcome::Alone);
            continue;
        }
        diesel::delete(idempotency_keys::table)
            .filter(idempotency_keys::workspace_id.eq(ws.0))
            .filter(idempotency_keys::key.eq(&key.key))
            .filter(idempotency_keys::created_at.le(idempotency_cutoff()))
            .execute(conn)
            .await?;
        let inserted = diesel::insert_into(idempotency_keys::table)
            .values((
                idempotency_keys::workspace_id.eq(ws.0),
                idempotency_keys::key.eq(&key.key),
                idempotency_keys::fingerprint.eq(key.fingerprint.to_vec()),
            ))
            .on_conflict_do_nothing()
            .execute(conn)
            .await?;
        if inserted == 0 {
            let answer = match existing_key(conn, ws, key).await? {
                Some((fp, _)) if fp != key.fingerprint => Err(InsertMessageError::IdempotencyMismatch),
                Some((_, Some(id))) => match load_message(conn, ws, id).await {
                    Ok(Some(message)) => Ok(Stored { message, replayed: true }),
                    Ok(None) => Err(InsertMessageError::Unknown(repo(anyhow::anyhow!("message {id} vanished")))),
                    Err(e) => Err(InsertMessageError::Unknown(e)),
                },
                _ => Err(InsertMessageError::Unknown(repo(anyhow::anyhow!("idempotency key without its message")))),
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
    // finds the contacts' threads, one creates the missing threads (issue 21: a group of sends to
    // different new recipients costs a few statements, not a few per recipient).
    let mut threads_by_address = std::collections::HashMap::new();
    let mut channels: Vec<ChannelId> = addresses.iter().map(|(c, _)| *c).collect();
    channels.dedup();
    for channel_id in channels {
        let of_channel: Vec<&str> = addresses.iter().filter(|(c, _)| *c == channel_id).map(|(_, a)| *a).collect();
        let by_phone = addressed_by_phone(conn, ws, channel_id).await?;
        let contact_of = contacts_for_addresses(conn, ws, by_phone, &of_channel).await?;
        let mut contact_ids: Vec<i64> = contact_of.values().copied().collect();
        contact_ids.sort_unstable();
        contact_ids.dedup();
        let thread_of = threads_for_contacts(conn, ws, channel_id, &contact_ids).await?;
        for address in of_channel {
            let thread_id = contact_of
                .get(address)
                .and_then(|c| thread_of.get(c))
                .ok_or_else(|| into_db(repo(anyhow::anyhow!("no thread resolved for a recipient"))))?;
            threads_by_address.insert((channel_id, address), *thread_id);
        }
    }
    let pending: Vec<(usize, i64)> = items
        .iter()
        .enumerate()
        .filter(|(i, _)| outcomes[*i].is_none())
        .map(|(i, item)| {
            let thread_id = match &item.recipient {
                Recipient::Thread(t) => t.0,
                Recipient::Address(a) => threads_by_address[&(item.channel_id, a.as_str())],
            };
            (i, thread_id)
        })
        .collect();
    if !pending.is_empty() {
        let rows: Vec<_> = pending
            .iter()
            .map(|&(i, thread_id)| {
                let new = &items[i];
                (
                    messages::workspace_id.eq(ws.0),
                    messages::thread_id.eq(thread_id),
                    messages::channel_id.eq(new.channel_id.0),
                    messages::direction.eq("outbound"),
                    messages::sender_kind.eq(if new.template.is_some() { "template" } else { "human" }),
                    messages::template.eq(new.template.as_ref().and_then(|t| serde_json::to_value(t).ok())),
                    messages::author_user_id.eq(new.author.map(|u| u.0)),
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
        // each thread's activity to its newest message's time, as insert_one does per message.
        let mut thread_ids: Vec<i64> = pending.iter().map(|&(_, t)| t).collect();
        thread_ids.sort_unstable();
        thread_ids.dedup();
        let newest = stored.iter().map(|m| m.created_at).max().unwrap_or_else(OffsetDateTime::now_utc);
        diesel::update(threads::table.filter(threads::workspace_id.eq(ws.0)).filter(threads::id.eq_any(&thread_ids)))
            .set((threads::last_message_at.eq(newest), threads::updated_at.eq(diesel::dsl::now)))
            .execute(conn)
            .await?;
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
        let events: Vec<serde_json::Value> = stored.iter().map(message_json).collect();
        outbox::record_many(conn, ws, EventType::MessageCreated, &events).await?;
        for (&(i, _), message) in pending.iter().zip(stored) {
            outcomes[i] = Some(Outcome::Done(Ok(Stored { message, replayed: false })));
        }
    }
    Ok(outcomes.into_iter().map(|o| o.unwrap_or(Outcome::Alone)).collect())
}
