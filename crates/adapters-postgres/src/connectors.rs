//! Storage of the channel connectors: the dispatch queue of outbound messages and the platforms'
//! callbacks (statuses and inbound messages).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bytea, Integer, Jsonb, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::channels::{ChannelId, ChannelType};
use domain::connectors::{
    Applied, CallbackChannel, CallbackStore, Dispatch, DispatchQueue, InboundMessage, OutboundContent, PlatformEvents,
    StatusUpdate, Template, WatermarkUpdate,
};
use domain::messaging::{MessageId, MessageStatus};
use domain::webhooks::EventType;
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::messages::message_json;
use crate::pool::Db;
use crate::schema::{channels, contacts, messages, threads};
use crate::webhooks::outbox;

/// [`DispatchQueue`] and [`CallbackStore`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgConnectors {
    db: Db,
}

impl PgConnectors {
    /// Connectors storage on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }

    /// A wake-up for one dispatcher: when outbound messages are queued (or a channel changes)
    /// in this instance.
    pub fn new_outbound(&self) -> crate::wake::Signal {
        self.db.wake().outbound()
    }
}

#[derive(QueryableByName)]
struct ClaimedRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    workspace_id: i64,
    #[diesel(sql_type = BigInt)]
    channel_id: i64,
    #[diesel(sql_type = Text)]
    channel_type: String,
    #[diesel(sql_type = Bytea)]
    credentials: Vec<u8>,
    #[diesel(sql_type = Nullable<Text>)]
    to_address: Option<String>,
    #[diesel(sql_type = Text)]
    content: String,
    #[diesel(sql_type = Nullable<Jsonb>)]
    template: Option<serde_json::Value>,
    #[diesel(sql_type = Integer)]
    attempts: i32,
}

fn into_dispatch(r: ClaimedRow) -> Result<Dispatch, RepoError> {
    let channel_type = r.channel_type.parse::<ChannelType>().map_err(|e| repo(anyhow::anyhow!("{}", e.message)))?;
    let content = match r.template {
        Some(t) => OutboundContent::Template(serde_json::from_value::<Template>(t).map_err(repo)?),
        None => OutboundContent::Text(r.content),
    };
    Ok(Dispatch {
        workspace_id: WorkspaceId(r.workspace_id),
        message_id: MessageId(r.id),
        channel_id: ChannelId(r.channel_id),
        channel_type,
        credentials_sealed: r.credentials,
        to: r.to_address,
        content,
        attempts: r.attempts,
    })
}

/// Moves one message to `next` if that is forward (domain rule), stamping the status time, and
/// records `message.status_updated`. Returns whether it changed. Runs in the caller's transaction.
async fn advance(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    message_id: i64,
    next: MessageStatus,
    at: OffsetDateTime,
    reason: Option<&str>,
    platform_message_id: Option<&str>,
) -> diesel::QueryResult<bool> {
    let current: Option<String> = messages::table
        .filter(messages::workspace_id.eq(ws.0))
        .filter(messages::id.eq(message_id))
        .select(messages::status)
        .for_update()
        .first(conn)
        .await
        .optional()?;
    let Some(current) = current.and_then(|s| s.parse::<MessageStatus>().ok()) else { return Ok(false) };
    if !current.can_advance_to(next) {
        return Ok(false);
    }
    let stamp = match next {
        MessageStatus::Sent => "sent_at",
        MessageStatus::Delivered => "delivered_at",
        MessageStatus::Read => "read_at",
        MessageStatus::Failed => "failed_at",
        MessageStatus::Queued => "queued_at",
    };
    // Skipped steps get the same time (a read receipt implies delivery), never a later one.
    let fill = match next {
        MessageStatus::Read => ", sent_at = coalesce(sent_at, $3), delivered_at = coalesce(delivered_at, $3)",
        MessageStatus::Delivered => ", sent_at = coalesce(sent_at, $3)",
        _ => "",
    };
    diesel::sql_query(format!(
        "UPDATE messages SET status = $4, {stamp} = $3, failure_reason = coalesce($5, failure_reason),
                platform_message_id = coalesce(platform_message_id, $6), updated_at = now() {fill}
         WHERE workspace_id = $1 AND id = $2"
    ))
    .bind::<BigInt, _>(ws.0)
    .bind::<BigInt, _>(message_id)
    .bind::<Timestamptz, _>(at)
    .bind::<Text, _>(next.as_str())
    .bind::<Nullable<Text>, _>(reason)
    .bind::<Nullable<Text>, _>(platform_message_id)
    .execute(conn)
    .await?;
    let row: (i64, i64, i64, String, String, String, OffsetDateTime) = messages::table
        .filter(messages::id.eq(message_id))
        .select((
            messages::id,
            messages::channel_id,
            messages::thread_id,
            messages::direction,
            messages::content,
            messages::status,
            messages::created_at,
        ))
        .first(conn)
        .await?;
    let m = domain::messaging::Message {
        id: MessageId(row.0),
        channel_id: ChannelId(row.1),
        thread_id: domain::messaging::ThreadId(row.2),
        direction: row.3.parse().unwrap_or(domain::messaging::Direction::Outbound),
        content: row.4,
        status: row.5.parse().unwrap_or(next),
        created_at: row.6,
    };
    // decisions.md, "Events as a contract": `data` is exactly the Message record.
    outbox::record(conn, ws, EventType::MessageStatusUpdated, &message_json(&m)).await?;
    Ok(true)
}

async fn in_tx<T: Send + 'static, F>(db: &Db, f: F) -> Result<T, RepoError>
where
    F: for<'c> FnOnce(
            &'c mut AsyncPgConnection,
        ) -> diesel_async::scoped_futures::ScopedBoxFuture<'static, 'c, diesel::QueryResult<T>>
        + Send
        + 'static,
{
    let mut pooled = db.conn().await.map_err(repo)?;
    let conn: &mut AsyncPgConnection = &mut pooled;
    let done = conn.transaction::<T, diesel::result::Error, _>(f).await.map_err(repo)?;
    // Status changes and callbacks write events: this instance's delivery loops look at once.
    db.wake().events_committed();
    Ok(done)
}

#[async_trait]
impl DispatchQueue for PgConnectors {
    async fn claim(&self, limit: i64, lease_secs: i64) -> Result<Vec<Dispatch>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let rows: Vec<ClaimedRow> = diesel::sql_query(
            // Channel first: queued messages of channels that cannot send (no credentials,
            // inactive, paused) are not looked at, however many there are (issue 21).
            "WITH due AS (
                 SELECT q.id FROM channels c
                 CROSS JOIN LATERAL (
                     SELECT m.id FROM messages m
                     WHERE m.channel_id = c.id AND m.workspace_id = c.workspace_id
                       AND m.status = 'queued' AND m.direction = 'outbound'
                       AND (m.next_dispatch_at IS NULL OR m.next_dispatch_at <= now())
                     ORDER BY m.id
                     LIMIT $1
                     FOR UPDATE OF m SKIP LOCKED
                 ) q
                 WHERE c.status = 'active' AND c.credentials_encrypted IS NOT NULL
                   AND (c.send_paused_until IS NULL OR c.send_paused_until <= now())
                 ORDER BY q.id
                 LIMIT $1
             ), claimed AS (
                 UPDATE messages m SET next_dispatch_at = now() + make_interval(secs => $2),
                                       dispatch_attempts = m.dispatch_attempts + 1
                 FROM due WHERE m.id = due.id
                 RETURNING m.id, m.workspace_id, m.channel_id, m.thread_id, m.content, m.template, m.dispatch_attempts
             )
             SELECT cl.id, cl.workspace_id, cl.channel_id, c.channel_type, c.credentials_encrypted AS credentials,
                    CASE WHEN c.channel_type = 'whatsapp' THEN ct.phone ELSE ct.platform_user_id END AS to_address,
                    cl.content, cl.template, cl.dispatch_attempts AS attempts
             FROM claimed cl
             JOIN channels c ON c.workspace_id = cl.workspace_id AND c.id = cl.channel_id
             JOIN threads t ON t.workspace_id = cl.workspace_id AND t.id = cl.thread_id
             JOIN contacts ct ON ct.workspace_id = t.workspace_id AND ct.id = t.contact_id
             ORDER BY cl.id",
        )
        .bind::<BigInt, _>(limit)
        .bind::<BigInt, _>(lease_secs)
        .load(&mut conn)
        .await
        .map_err(repo)?;
        rows.into_iter().map(into_dispatch).collect()
    }

    async fn sent(&self, d: &Dispatch, platform_message_id: &str) -> Result<(), RepoError> {
        let (ws, id, pid) = (d.workspace_id, d.message_id.0, platform_message_id.to_owned());
        in_tx(&self.db, move |c| {
            async move {
                advance(c, ws, id, MessageStatus::Sent, OffsetDateTime::now_utc(), None, Some(&pid)).await?;
                // A callback may have advanced it before we got here: keep the platform id anyway.
                diesel::update(messages::table.filter(messages::workspace_id.eq(ws.0)).filter(messages::id.eq(id)))
                    .set((
                        messages::platform_message_id.eq(&pid),
                        messages::next_dispatch_at.eq(None::<OffsetDateTime>),
                    ))
                    .execute(c)
                    .await?;
                Ok(())
            }
            .scope_boxed()
        })
        .await?;
        count_send(d, "sent");
        Ok(())
    }

    async fn failed(&self, d: &Dispatch, reason: &str) -> Result<(), RepoError> {
        let (ws, id, reason) = (d.workspace_id, d.message_id.0, reason.to_owned());
        in_tx(&self.db, move |c| {
            async move {
                advance(c, ws, id, MessageStatus::Failed, OffsetDateTime::now_utc(), Some(&reason), None).await?;
                Ok(())
            }
            .scope_boxed()
        })
        .await?;
        count_send(d, "failed");
        Ok(())
    }

    async fn retry_at(&self, d: &Dispatch, at: OffsetDateTime) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        diesel::update(
            messages::table.filter(messages::workspace_id.eq(d.workspace_id.0)).filter(messages::id.eq(d.message_id.0)),
        )
        .set(messages::next_dispatch_at.eq(at))
        .execute(&mut conn)
        .await
        .map_err(repo)?;
        count_send(d, "retrying");
        Ok(())
    }

    async fn pause_channel(&self, d: &Dispatch, until: OffsetDateTime) -> Result<(), RepoError> {
        let (ws, channel, id) = (d.workspace_id, d.channel_id, d.message_id.0);
        in_tx(&self.db, move |c| {
            async move {
                diesel::update(
                    channels::table.filter(channels::workspace_id.eq(ws.0)).filter(channels::id.eq(channel.0)),
                )
                .set(channels::send_paused_until.eq(until))
                .execute(c)
                .await?;
                // The platform's limit is not the message's fault: the attempt does not count.
                diesel::sql_query(
                    "UPDATE messages SET next_dispatch_at = $3, dispatch_attempts = greatest(dispatch_attempts - 1, 0)
                     WHERE workspace_id = $1 AND id = $2",
                )
                .bind::<BigInt, _>(ws.0)
                .bind::<BigInt, _>(id)
                .bind::<Timestamptz, _>(until)
                .execute(c)
                .await?;
                Ok(())
            }
            .scope_boxed()
        })
        .await?;
        count_send(d, "paused");
        Ok(())
    }
}

async fn apply_status(
    conn: &mut AsyncPgConnection,
    ch: &CallbackChannel,
    s: &StatusUpdate,
) -> diesel::QueryResult<bool> {
    let id: Option<i64> = messages::table
        .filter(messages::workspace_id.eq(ch.workspace_id.0))
        .filter(messages::channel_id.eq(ch.channel_id.0))
        .filter(messages::platform_message_id.eq(&s.platform_message_id))
        .select(messages::id)
        .first(conn)
        .await
        .optional()?;
    match id {
        Some(id) => advance(conn, ch.workspace_id, id, s.status, s.at, s.error.as_deref(), None).await,
        None => {
            tracing::info!(channel_id = ch.channel_id.0, platform_message_id = %s.platform_message_id, "status for an unknown message ignored");
            Ok(false)
        }
    }
}

async fn apply_watermark(
    conn: &mut AsyncPgConnection,
    ch: &CallbackChannel,
    w: &WatermarkUpdate,
) -> diesel::QueryResult<usize> {
    let ids: Vec<i64> = messages::table
        .inner_join(threads::table.on(threads::id.eq(messages::thread_id)))
        .inner_join(contacts::table.on(contacts::id.eq(threads::contact_id)))
        .filter(messages::workspace_id.eq(ch.workspace_id.0))
        .filter(messages::channel_id.eq(ch.channel_id.0))
        .filter(messages::direction.eq("outbound"))
        .filter(messages::status.eq_any(["sent", "delivered"]))
        .filter(messages::created_at.le(w.watermark))
        .filter(contacts::platform_user_id.eq(&w.contact))
        .select(messages::id)
        .order(messages::id.asc())
        .load(conn)
        .await?;
    let mut changed = 0;
    for id in ids {
        if advance(conn, ch.workspace_id, id, w.status, w.watermark, None, None).await? {
            changed += 1;
        }
    }
    Ok(changed)
}

#[derive(QueryableByName)]
struct InsertedId {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

async fn find_contact(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    by_phone: bool,
    address: &str,
) -> diesel::QueryResult<Option<(i64, Option<String>)>> {
    let q = contacts::table.filter(contacts::workspace_id.eq(ws.0)).select((contacts::id, contacts::name)).into_boxed();
    let q =
        if by_phone { q.filter(contacts::phone.eq(address)) } else { q.filter(contacts::platform_user_id.eq(address)) };
    q.first(conn).await.optional()
}

/// Records a message from a known contact: its activity times, and its name when the platform
/// tells it for the first time (with `contact.updated`). The update also holds the contact's row
/// until commit, which serialises concurrent messages of one sender for the thread lookup.
async fn touch_contact(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    id: i64,
    name: Option<String>,
    m: &InboundMessage,
) -> diesel::QueryResult<i64> {
    let learned = name.is_none() && m.name.is_some();
    diesel::update(contacts::table.find(id))
        .set((
            contacts::last_contacted_at.eq(m.at),
            contacts::first_contacted_at.eq(diesel::dsl::sql::<Nullable<Timestamptz>>("coalesce(first_contacted_at, ")
                .bind::<Timestamptz, _>(m.at)
                .sql(")")),
            contacts::name.eq(diesel::dsl::sql::<Nullable<Text>>("coalesce(name, ")
                .bind::<Nullable<Text>, _>(m.name.as_deref())
                .sql(")")),
            contacts::updated_at.eq(diesel::dsl::now),
        ))
        .execute(conn)
        .await?;
    if learned {
        let data = crate::contacts::record(conn, ws, id).await?;
        outbox::record(conn, ws, EventType::ContactUpdated, &data).await?;
    }
    Ok(id)
}

/// Stores an inbound message: the contact (created, or named when the platform tells us the
/// name), the thread (created, or reopened), unread count and activity times, each with its event.
async fn apply_inbound(
    conn: &mut AsyncPgConnection,
    ch: &CallbackChannel,
    channel_type: ChannelType,
    m: &InboundMessage,
) -> diesel::QueryResult<bool> {
    let ws = ch.workspace_id;
    let seen: Option<i64> = messages::table
        .filter(messages::channel_id.eq(ch.channel_id.0))
        .filter(messages::platform_message_id.eq(&m.platform_message_id))
        .select(messages::id)
        .first(conn)
        .await
        .optional()?;
    if seen.is_some() {
        return Ok(false);
    }
    let by_phone = channel_type == ChannelType::Whatsapp;
    let contact_id = match find_contact(conn, ws, by_phone, &m.from).await? {
        Some((id, name)) => touch_contact(conn, ws, id, name, m).await?,
        None => {
            let column = if by_phone { "phone" } else { "platform_user_id" };
            // Concurrent first messages from one sender race to create the contact: the losers
            // wait for the winner's commit, insert nothing and update its row like any later
            // message (docs/benchmarks.md, "Concurrent first contact").
            let inserted: Option<i64> = diesel::sql_query(format!(
                "INSERT INTO contacts (workspace_id, name, {column}, first_contacted_at, last_contacted_at)
                 VALUES ($1, $2, $3, $4, $4)
                 ON CONFLICT (workspace_id, {column}) WHERE {column} IS NOT NULL DO NOTHING
                 RETURNING id"
            ))
            .bind::<BigInt, _>(ws.0)
            .bind::<Nullable<Text>, _>(m.name.as_deref())
            .bind::<Text, _>(&m.from)
            .bind::<Timestamptz, _>(m.at)
            .load::<InsertedId>(conn)
            .await?
            .pop()
            .map(|r| r.id);
            match inserted {
                Some(id) => {
                    let data = crate::contacts::record(conn, ws, id).await?;
                    outbox::record(conn, ws, EventType::ContactCreated, &data).await?;
                    id
                }
                None => {
                    let (id, name) =
                        find_contact(conn, ws, by_phone, &m.from).await?.ok_or(diesel::result::Error::NotFound)?;
                    touch_contact(conn, ws, id, name, m).await?
                }
            }
        }
    };
    let thread: Option<(i64, String)> = threads::table
        .filter(threads::workspace_id.eq(ws.0))
        .filter(threads::contact_id.eq(contact_id))
        .filter(threads::channel_id.eq(ch.channel_id.0))
        .order(threads::id.desc())
        .select((threads::id, threads::status))
        .first(conn)
        .await
        .optional()?;
    let thread_id = match thread {
        Some((id, status)) => {
            diesel::sql_query(
                "UPDATE threads SET unread_count = unread_count + 1, last_message_at = greatest(last_message_at, $2),
                        status = CASE WHEN status = 'resolved' THEN 'open' ELSE status END, updated_at = now()
                 WHERE id = $1",
            )
            .bind::<BigInt, _>(id)
            .bind::<Timestamptz, _>(m.at)
            .execute(conn)
            .await?;
            if status == "resolved" {
                let data = thread_record(conn, ws, id).await?;
                outbox::record(conn, ws, EventType::ThreadStatusChanged, &data).await?;
            }
            id
        }
        None => {
            let id: i64 = diesel::insert_into(threads::table)
                .values((
                    threads::workspace_id.eq(ws.0),
                    threads::contact_id.eq(contact_id),
                    threads::channel_id.eq(ch.channel_id.0),
                    threads::unread_count.eq(1),
                    threads::last_message_at.eq(m.at),
                ))
                .returning(threads::id)
                .get_result(conn)
                .await?;
            let data = thread_record(conn, ws, id).await?;
            outbox::record(conn, ws, EventType::ThreadCreated, &data).await?;
            id
        }
    };
    let row: (i64, OffsetDateTime) = diesel::insert_into(messages::table)
        .values((
            messages::workspace_id.eq(ws.0),
            messages::thread_id.eq(thread_id),
            messages::channel_id.eq(ch.channel_id.0),
            messages::direction.eq("inbound"),
            messages::sender_kind.eq("contact"),
            messages::content.eq(&m.text),
            messages::status.eq("delivered"),
            messages::delivered_at.eq(m.at),
            messages::platform_message_id.eq(&m.platform_message_id),
            messages::created_at.eq(m.at),
            messages::updated_at.eq(diesel::dsl::now),
        ))
        .returning((messages::id, messages::created_at))
        .get_result(conn)
        .await?;
    let message = domain::messaging::Message {
        id: MessageId(row.0),
        channel_id: ch.channel_id,
        thread_id: domain::messaging::ThreadId(thread_id),
        direction: domain::messaging::Direction::Inbound,
        content: m.text.clone(),
        status: MessageStatus::Delivered,
        created_at: row.1,
    };
    outbox::record(conn, ws, EventType::MessageCreated, &message_json(&message)).await?;
    Ok(true)
}

/// The Thread record of `id` as it is now in this transaction (the `data` of `thread.*`).
async fn thread_record(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    id: i64,
) -> diesel::QueryResult<serde_json::Value> {
    let thread = crate::threads::load(conn, ws, id, false).await?.ok_or(diesel::result::Error::NotFound)?;
    Ok(crate::threads::thread_json(&thread))
}

#[async_trait]
impl CallbackStore for PgConnectors {
    async fn channels_for_accounts(
        &self,
        channel_type: ChannelType,
        account_ids: &[String],
    ) -> Result<Vec<CallbackChannel>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        // One query for all: a callback's accounts never cost a query each.
        let rows: Vec<CallbackRow> = channels::table
            .filter(channels::channel_type.eq(channel_type.as_str()))
            .filter(channels::platform_account_id.eq_any(account_ids))
            .filter(channels::credentials_encrypted.is_not_null())
            .select((
                channels::workspace_id,
                channels::id,
                channels::platform_account_id,
                channels::credentials_encrypted,
            ))
            .load(&mut conn)
            .await
            .map_err(repo)?;
        Ok(callback_channels(rows))
    }

    async fn platform_channels(&self, channel_type: ChannelType) -> Result<Vec<CallbackChannel>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let rows: Vec<CallbackRow> = channels::table
            .filter(channels::channel_type.eq(channel_type.as_str()))
            .filter(channels::platform_account_id.is_not_null())
            .filter(channels::credentials_encrypted.is_not_null())
            .select((
                channels::workspace_id,
                channels::id,
                channels::platform_account_id,
                channels::credentials_encrypted,
            ))
            .load(&mut conn)
            .await
            .map_err(repo)?;
        Ok(callback_channels(rows))
    }

    async fn verify_token_known(&self, channel_type: ChannelType, digest: [u8; 32]) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let n: i64 = channels::table
            .filter(channels::channel_type.eq(channel_type.as_str()))
            .filter(channels::verify_token_digest.eq(digest.to_vec()))
            .count()
            .get_result(&mut conn)
            .await
            .map_err(repo)?;
        Ok(n > 0)
    }

    async fn apply(&self, channel: &CallbackChannel, events: &PlatformEvents) -> Result<Applied, RepoError> {
        let channel = channel.clone();
        let events = events.clone();
        in_tx(&self.db, move |c| {
            async move {
                let channel_type: String = channels::table
                    .filter(channels::id.eq(channel.channel_id.0))
                    .select(channels::channel_type)
                    .first(c)
                    .await?;
                let channel_type = channel_type.parse::<ChannelType>().unwrap_or(ChannelType::Whatsapp);
                let mut applied = Applied::default();
                // Inbound first: a reply and the read receipt of our message may come together.
                for m in &events.inbound {
                    if apply_inbound(c, &channel, channel_type, m).await? {
                        applied.inbound += 1;
                    }
                }
                for s in &events.statuses {
                    if apply_status(c, &channel, s).await? {
                        applied.statuses += 1;
                    }
                }
                for w in &events.watermarks {
                    applied.statuses += apply_watermark(c, &channel, w).await?;
                }
                Ok(applied)
            }
            .scope_boxed()
        })
        .await
    }
}

/// `(workspace_id, id, platform_account_id, credentials_encrypted)` of a channel.
type CallbackRow = (i64, i64, Option<String>, Option<Vec<u8>>);

fn callback_channels(rows: Vec<CallbackRow>) -> Vec<CallbackChannel> {
    rows.into_iter()
        .filter_map(|(ws, id, account, creds)| {
            Some(CallbackChannel {
                workspace_id: WorkspaceId(ws),
                channel_id: ChannelId(id),
                account_id: account?,
                credentials_sealed: creds?,
            })
        })
        .collect()
}

/// Send attempts to a platform, by `channel_type` and `outcome` (`sent`, `failed`: given up,
/// `retrying`: tried again later, `paused`: the platform's rate limit paused the channel).
pub const SENDS: &str = "wms_connector_sends_total";

/// Counts a send attempt's outcome, once it is recorded.
fn count_send(d: &Dispatch, outcome: &'static str) {
    metrics::counter!(SENDS, "channel_type" => d.channel_type.as_str(), "outcome" => outcome).increment(1);
}
