//! Messages and the threads and contacts they create.

mod outbound;
mod recipients;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::channels::ChannelId;
use domain::common::page::{Page, PageRequest};
use domain::messaging::window::WindowClosed;
use domain::messaging::{
    Direction, EarlierUse, IdempotencyKey, InsertMessageError, Message, MessageFilter, MessageId, MessageRepository,
    MessageStatus, NewOutboundMessage, Sender, SenderStanding, Stored, ThreadId, ThreadRef,
};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::group_commit::GroupCommit;
use crate::pool::Db;
use crate::schema::{ai_agents, contacts, idempotency_keys, messages, threads, workspace_members};
use outbound::OutboundCommit;

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
    sender_type: String,
    sender_id: Option<i64>,
}

/// The author columns the analytics and the assistant read.
fn author_user(sender: Sender) -> Option<i64> {
    match sender {
        Sender::User(id) => Some(id),
        _ => None,
    }
}

fn author_ai_agent(sender: Sender) -> Option<i64> {
    match sender {
        Sender::AiAgent(id) => Some(id),
        _ => None,
    }
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
            sender: Sender::stored(&self.sender_type, self.sender_id),
        })
    }
}

enum TxError {
    Refused(InsertMessageError),
    Window(WindowClosed),
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

/// Keys used at or before this time are forgotten (the domain's [`IdempotencyKey::LIFETIME`]).
fn idempotency_cutoff() -> OffsetDateTime {
    IdempotencyKey::forgotten_at_or_before(OffsetDateTime::now_utc())
}

/// Claims the key for this send: forgets it if it expired, then inserts it unless a live one
/// exists (waiting for a concurrent request with the same key to commit). `false` when the key
/// was already taken, so the caller answers from [`existing_key`].
async fn claim_key(conn: &mut AsyncPgConnection, ws: WorkspaceId, key: &IdempotencyKey) -> diesel::QueryResult<bool> {
    // An expired key goes, and so does a committed key without its message: only a refused send
    // of a group could leave one before keys were released on refusal (nothing to replay).
    diesel::delete(idempotency_keys::table)
        .filter(idempotency_keys::workspace_id.eq(ws.0))
        .filter(idempotency_keys::key.eq(&key.key))
        .filter(idempotency_keys::created_at.le(idempotency_cutoff()).or(idempotency_keys::message_id.is_null()))
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
    Ok(inserted > 0)
}

/// Gives back keys claimed in this transaction by sends that were refused (no message to replay).
async fn release_keys(conn: &mut AsyncPgConnection, ws: WorkspaceId, keys: &[&str]) -> diesel::QueryResult<()> {
    diesel::delete(idempotency_keys::table)
        .filter(idempotency_keys::workspace_id.eq(ws.0))
        .filter(idempotency_keys::key.eq_any(keys))
        .filter(idempotency_keys::message_id.is_null())
        .execute(conn)
        .await?;
    Ok(())
}

/// The live earlier use of the key, if any: the facts [`IdempotencyKey::replay_of`] and
/// [`IdempotencyKey::reuse_of`] decide over.
async fn existing_key(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    key: &IdempotencyKey,
) -> diesel::QueryResult<Option<EarlierUse>> {
    let row: Option<(Vec<u8>, Option<i64>)> = idempotency_keys::table
        .filter(idempotency_keys::workspace_id.eq(ws.0))
        .filter(idempotency_keys::key.eq(&key.key))
        .filter(idempotency_keys::created_at.gt(idempotency_cutoff()))
        .select((idempotency_keys::fingerprint, idempotency_keys::message_id))
        .first(conn)
        .await
        .optional()?;
    Ok(row.map(|(fingerprint, id)| EarlierUse { fingerprint, message_id: id.map(MessageId) }))
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
        // The window rides on the read the send makes anyway: no statement of its own.
        let row: Option<(i64, i64, Option<OffsetDateTime>, Option<OffsetDateTime>)> = threads::table
            .inner_join(contacts::table.on(contacts::id.eq(threads::contact_id)))
            .filter(threads::workspace_id.eq(ws.0))
            .filter(threads::id.eq(id.0))
            .select((threads::id, threads::channel_id, threads::latest_inbound_at, contacts::erased_at))
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        Ok(row.map(|(id, channel_id, latest_inbound_at, erased_at)| ThreadRef {
            id: ThreadId(id),
            channel_id: ChannelId(channel_id),
            latest_inbound_at,
            contact_erased: erased_at.is_some(),
        }))
    }

    async fn sender_standing(&self, ws: WorkspaceId, sender: Sender) -> Result<SenderStanding, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        Ok(match sender {
            Sender::User(id) => workspace_members::table
                .filter(workspace_members::workspace_id.eq(ws.0))
                .filter(workspace_members::user_id.eq(id))
                .select(workspace_members::is_active)
                .first::<bool>(&mut conn)
                .await
                .optional()
                .map_err(repo)?
                .map_or(SenderStanding::Unknown, |active| SenderStanding::Member { active }),
            Sender::AiAgent(id) => ai_agents::table
                .filter(ai_agents::workspace_id.eq(ws.0))
                .filter(ai_agents::id.eq(id))
                .select(ai_agents::status)
                .first::<String>(&mut conn)
                .await
                .optional()
                .map_err(repo)?
                .map_or(SenderStanding::Unknown, |status| SenderStanding::agent(&status)),
            Sender::Contact(_) | Sender::ApiKey(_) => SenderStanding::Unknown,
        })
    }

    async fn replay(&self, ws: WorkspaceId, key: &IdempotencyKey) -> Result<Option<Message>, InsertMessageError> {
        let mut conn = self.db.conn().await.map_err(|e| InsertMessageError::Unknown(repo(e)))?;
        let earlier = existing_key(&mut conn, ws, key).await.map_err(|e| InsertMessageError::Unknown(repo(e)))?;
        match key.replay_of(earlier.as_ref())? {
            Some(id) => Ok(load_message(&mut conn, ws, id.0).await?),
            None => Ok(None),
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
