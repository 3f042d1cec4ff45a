//! Storage of the channel connectors: the dispatch queue of outbound messages and the platforms'
//! callbacks (statuses and inbound messages).

mod callback_throttle;
mod callbacks;
mod inbound;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bytea, Integer, Jsonb, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::channels::{ChannelId, ChannelStatus, ChannelType};
use domain::connectors::inbound::SenderAddress;
use domain::connectors::{attempts_after_rate_limit, Dispatch, DispatchQueue, OutboundContent, Template};
use domain::messaging::{decide_advance, MessageId, MessageStatus};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;
use crate::schema::{channels, messages};
use crate::webhooks::outbox;

pub use callback_throttle::PgCallbackThrottle;

/// [`DispatchQueue`] and [`domain::connectors::CallbackStore`] on PostgreSQL.
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
    phone: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    platform_user_id: Option<String>,
    #[diesel(sql_type = Text)]
    content: String,
    #[diesel(sql_type = Nullable<Jsonb>)]
    template: Option<serde_json::Value>,
    #[diesel(sql_type = Integer)]
    attempts: i32,
    #[diesel(sql_type = Nullable<Text>)]
    platform_tag: Option<String>,
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
        // The contact's address on the channel's platform.
        to: SenderAddress::of(channel_type).pick(r.phone, r.platform_user_id),
        content,
        attempts: r.attempts,
        tag: r.platform_tag.as_deref().and_then(domain::messaging::window::MessageTag::from_platform_name),
    })
}

/// The column holding the time a message reached `status`.
fn stamp_column(status: MessageStatus) -> &'static str {
    match status {
        MessageStatus::Sent => "sent_at",
        MessageStatus::Delivered => "delivered_at",
        MessageStatus::Read => "read_at",
        MessageStatus::Failed => "failed_at",
        MessageStatus::Queued => "queued_at",
    }
}

/// Moves one message to `next` if that is forward (domain rule), stamping the status time, and
/// records `message.status_updated`. Returns whether it changed. Runs in the caller's transaction.
pub(crate) async fn advance(
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
    let Some(change) = decide_advance(current, next) else { return Ok(false) };
    let stamp = stamp_column(change.status);
    let fill: String =
        change.implied.iter().map(|s| format!(", {c} = coalesce({c}, $3)", c = stamp_column(*s))).collect();
    diesel::sql_query(format!(
        "UPDATE messages SET status = $4, {stamp} = $3, failure_reason = coalesce($5, failure_reason),
                platform_message_id = coalesce(platform_message_id, $6), updated_at = now() {fill}
         WHERE workspace_id = $1 AND id = $2"
    ))
    .bind::<BigInt, _>(ws.0)
    .bind::<BigInt, _>(message_id)
    .bind::<Timestamptz, _>(at)
    .bind::<Text, _>(change.status.as_str())
    .bind::<Nullable<Text>, _>(reason)
    .bind::<Nullable<Text>, _>(platform_message_id)
    .execute(conn)
    .await?;
    let row: (i64, i64, i64, String, String, String, OffsetDateTime, String, Option<i64>) = messages::table
        .filter(messages::id.eq(message_id))
        .select((
            messages::id,
            messages::channel_id,
            messages::thread_id,
            messages::direction,
            messages::content,
            messages::status,
            messages::created_at,
            messages::sender_type,
            messages::sender_id,
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
        sender: domain::messaging::Sender::stored(&row.7, row.8),
    };
    // docs/contract.md, "Events as a contract": `data` is exactly the Message record.
    let event = change.event(m);
    outbox::record(conn, ws, OffsetDateTime::now_utc(), &[event]).await?;
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
            // inactive, paused) are not looked at, however many there are.
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
                 WHERE c.status = ANY ($3) AND c.credentials_encrypted IS NOT NULL
                   AND (c.send_paused_until IS NULL OR c.send_paused_until <= now())
                 ORDER BY q.id
                 LIMIT $1
             ), claimed AS (
                 UPDATE messages m SET next_dispatch_at = now() + make_interval(secs => $2),
                                       dispatch_attempts = m.dispatch_attempts + 1
                 FROM due WHERE m.id = due.id
                 RETURNING m.id, m.workspace_id, m.channel_id, m.thread_id, m.content, m.template, m.dispatch_attempts, m.platform_tag
             )
             SELECT cl.id, cl.workspace_id, cl.channel_id, c.channel_type, c.credentials_encrypted AS credentials,
                    ct.phone, ct.platform_user_id,
                    cl.content, cl.template, cl.dispatch_attempts AS attempts, cl.platform_tag
             FROM claimed cl
             JOIN channels c ON c.workspace_id = cl.workspace_id AND c.id = cl.channel_id
             JOIN threads t ON t.workspace_id = cl.workspace_id AND t.id = cl.thread_id
             JOIN contacts ct ON ct.workspace_id = t.workspace_id AND ct.id = t.contact_id
             ORDER BY cl.id",
        )
        .bind::<BigInt, _>(limit)
        .bind::<BigInt, _>(lease_secs)
        .bind::<diesel::sql_types::Array<diesel::sql_types::Text>, _>(ChannelStatus::dispatching())
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
                // The attempts as stored, under the row's lock, not as claimed: once a lease
                // expires another dispatcher may have claimed the message again, and its attempt
                // counts. One more statement than an update that computes the value itself, on
                // the rare path of a rate limit.
                let message = messages::table.filter(messages::workspace_id.eq(ws.0)).filter(messages::id.eq(id));
                let stored: Option<i32> =
                    message.select(messages::dispatch_attempts).for_update().first(c).await.optional()?;
                let Some(stored) = stored else { return Ok(()) };
                diesel::update(message)
                    .set((
                        messages::next_dispatch_at.eq(until),
                        messages::dispatch_attempts.eq(attempts_after_rate_limit(stored)),
                    ))
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

/// Send attempts to a platform, by `channel_type` and `outcome` (`sent`, `failed`: given up,
/// `retrying`: tried again later, `paused`: the platform's rate limit paused the channel).
pub const SENDS: &str = "wms_connector_sends_total";

/// Counts a send attempt's outcome, once it is recorded.
fn count_send(d: &Dispatch, outcome: &'static str) {
    metrics::counter!(SENDS, "channel_type" => d.channel_type.as_str(), "outcome" => outcome).increment(1);
}
