//! The assistant's live data ([`LiveData`]) on PostgreSQL.
//!
//! Every method runs in its own `READ ONLY` transaction ([`read_only`]): a tool cannot write even
//! through a bug, because PostgreSQL refuses any write in it. The transaction is also `REPEATABLE
//! READ`, so the several queries of one tool see one snapshot. Every query is scoped by
//! `workspace_id`, including joins, so ids of another workspace match nothing.
//!
//! Figures that would need a scan of every message or thread come from the rollups
//! `message_daily_stats` and `thread_status_stats` (migration `2026-11-20-000004_assistant`),
//! which triggers keep exact.

mod analytics;
mod contacts;
mod overview;

use async_trait::async_trait;
use diesel_async::scoped_futures::ScopedBoxFuture;
use diesel_async::AsyncPgConnection;
use domain::assistant::{
    ChannelStats, ChannelStatsError, ChannelSummary, ContactFacts, ContactKey, ContactProfile, LiveData, WebhookList,
    WorkspaceOverview,
};
use domain::channels::{ChannelId, ChannelType};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;

/// [`LiveData`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgLiveData {
    db: Db,
}

impl PgLiveData {
    /// Live data read from `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

/// Runs `f` in a `READ ONLY`, `REPEATABLE READ` transaction on a pooled connection. Public so that
/// tests can prove that a write inside it fails.
///
/// # Errors
/// The pool's or the queries' failures.
pub async fn read_only<T, F>(db: &Db, f: F) -> Result<T, RepoError>
where
    T: Send + 'static,
    F: for<'r> FnOnce(&'r mut AsyncPgConnection) -> ScopedBoxFuture<'static, 'r, Result<T, diesel::result::Error>>
        + Send,
{
    let mut conn = db.conn().await.map_err(repo)?;
    conn.build_transaction().repeatable_read().read_only().run(f).await.map_err(repo)
}

#[async_trait]
impl LiveData for PgLiveData {
    async fn overview(&self, ws: WorkspaceId, now: OffsetDateTime) -> Result<Option<WorkspaceOverview>, RepoError> {
        read_only(&self.db, move |c| overview::load(c, ws, now)).await
    }

    async fn channels(
        &self,
        ws: WorkspaceId,
        channel_type: Option<ChannelType>,
    ) -> Result<Vec<ChannelSummary>, RepoError> {
        read_only(&self.db, move |c| overview::channels(c, ws, channel_type)).await
    }

    async fn webhooks(&self, ws: WorkspaceId, active_only: bool) -> Result<WebhookList, RepoError> {
        read_only(&self.db, move |c| overview::webhooks(c, ws, active_only)).await
    }

    async fn channel_stats(
        &self,
        ws: WorkspaceId,
        channel: Option<ChannelId>,
        days: u16,
        now: OffsetDateTime,
    ) -> Result<ChannelStats, ChannelStatsError> {
        let found = read_only(&self.db, move |c| analytics::load(c, ws, channel, days, now)).await?;
        found.ok_or_else(|| ChannelStatsError::UnknownChannel(channel.unwrap_or(ChannelId(0))))
    }

    async fn find_contacts(
        &self,
        ws: WorkspaceId,
        key: &ContactKey,
        limit: i64,
    ) -> Result<Vec<ContactProfile>, RepoError> {
        let key = key.clone();
        read_only(&self.db, move |c| contacts::find(c, ws, key, limit)).await
    }

    async fn contact_facts(
        &self,
        ws: WorkspaceId,
        contact_id: i64,
        label: Option<String>,
        days: u16,
        now: OffsetDateTime,
    ) -> Result<ContactFacts, RepoError> {
        read_only(&self.db, move |c| contacts::facts(c, ws, contact_id, label, days, now)).await
    }
}

/// Parses a stored channel type; the column's CHECK constraint makes failure a corrupt row.
fn channel_type(s: &str) -> Result<ChannelType, diesel::result::Error> {
    s.parse::<ChannelType>().map_err(|e| diesel::result::Error::DeserializationError(e.message.into()))
}
