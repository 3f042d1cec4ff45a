//! Messages and the threads and contacts they create.

use async_trait::async_trait;
use diesel::prelude::*;
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
use crate::pool::Db;
use crate::rfc3339;
use crate::schema::{channels, contacts, idempotency_keys, messages, threads};
use crate::webhooks::outbox;
use domain::webhooks::EventType;

/// [`MessageRepository`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgMessageRepository {
    db: Db,
}

impl PgMessageRepository {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
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

/// The thread for an address on a channel: its contact found or created, then the contact's most
/// recent thread on the channel, or a new one.
async fn thread_for_address(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    channel_id: ChannelId,
    address: &str,
) -> diesel::QueryResult<i64> {
    let channel_type: String = channels::table
        .filter(channels::workspace_id.eq(ws.0))
        .filter(channels::id.eq(channel_id.0))
        .select(channels::channel_type)
        .first(conn)
        .await?;
    let by_phone = channel_type == "whatsapp";
    let found: Option<i64> = if by_phone {
        contacts::table
            .filter(contacts::workspace_id.eq(ws.0))
            .filter(contacts::phone.eq(address))
            .select(contacts::id)
            .first(conn)
            .await
            .optional()?
    } else {
        contacts::table
            .filter(contacts::workspace_id.eq(ws.0))
            .filter(contacts::platform_user_id.eq(address))
            .select(contacts::id)
            .first(conn)
            .await
            .optional()?
    };
    let contact_id = match found {
        Some(id) => id,
        None => {
            let (phone, platform_user_id) = if by_phone { (Some(address), None) } else { (None, Some(address)) };
            let (id, created_at): (i64, OffsetDateTime) = diesel::insert_into(contacts::table)
                .values((
                    contacts::workspace_id.eq(ws.0),
                    contacts::phone.eq(phone),
                    contacts::platform_user_id.eq(platform_user_id),
                    contacts::first_contacted_at.eq(diesel::dsl::now),
                ))
                .returning((contacts::id, contacts::created_at))
                .get_result(conn)
                .await?;
            let data = serde_json::json!({
                "id": id, "name": null, "phone": phone, "email": null, "platform_user_id": platform_user_id,
                "created_at": rfc3339(created_at),
            });
            outbox::record(conn, ws, EventType::ContactCreated, &data).await?;
            id
        }
    };
    let thread: Option<i64> = threads::table
        .filter(threads::workspace_id.eq(ws.0))
        .filter(threads::contact_id.eq(contact_id))
        .filter(threads::channel_id.eq(channel_id.0))
        .order(threads::id.desc())
        .select(threads::id)
        .first(conn)
        .await
        .optional()?;
    if let Some(id) = thread {
        return Ok(id);
    }
    let (id, status, created_at): (i64, String, OffsetDateTime) = diesel::insert_into(threads::table)
        .values((
            threads::workspace_id.eq(ws.0),
            threads::contact_id.eq(contact_id),
            threads::channel_id.eq(channel_id.0),
        ))
        .returning((threads::id, threads::status, threads::created_at))
        .get_result(conn)
        .await?;
    let data = serde_json::json!({
        "id": id, "channel_id": channel_id.0, "contact_id": contact_id, "status": status,
        "unread_count": 0, "assignee": null, "created_at": rfc3339(created_at),
    });
    outbox::record(conn, ws, EventType::ThreadCreated, &data).await?;
    Ok(id)
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
        let mut conn = self.db.conn().await.map_err(|e| InsertMessageError::Unknown(repo(e)))?;
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
                    diesel::update(
                        threads::table.filter(threads::workspace_id.eq(ws.0)).filter(threads::id.eq(thread_id)),
                    )
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
}
