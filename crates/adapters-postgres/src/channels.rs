//! Channels in storage.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::audit::AuditEntry;
use domain::channels::{
    ChangeChannelError, Channel, ChannelChange, ChannelFilter, ChannelId, ChannelRepository, ChannelStatus,
    ChannelType, InsertChannelError, NewChannel,
};
use domain::common::page::{Page, PageRequest};
use domain::connectors::templates::keeps_catalogue;
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::coalesce::{shared_answer, Batch, Coalescer};
use crate::error::{repo, unique_violation};
use crate::pool::Db;
use crate::schema::{channels, whatsapp_templates};
use crate::webhooks::outbox;

/// [`ChannelRepository`] on PostgreSQL. Identical concurrent listings, and concurrent reads of
/// one channel (every send reads its channel), share one query ([`crate::coalesce`]).
#[derive(Debug, Clone)]
pub struct PgChannelRepository {
    db: Db,
    lists: Coalescer<ChannelLists>,
    finds: Coalescer<ChannelFinds>,
}

impl PgChannelRepository {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self {
            lists: Coalescer::new(ChannelLists { db: db.clone() }, db.acquire_timeout()),
            finds: Coalescer::new(ChannelFinds { db: db.clone() }, db.acquire_timeout()),
            db,
        }
    }
}

/// One channel by id, read once for a batch of concurrent reads of it: 64 clients sending through
/// one channel cost one read (and one transaction) per batch, not one per send.
struct ChannelFinds {
    db: Db,
}

#[async_trait]
impl Batch for ChannelFinds {
    type Key = (WorkspaceId, ChannelId);
    type Output = Option<Channel>;

    async fn run(&self, &(ws, id): &Self::Key, count: usize) -> Result<Vec<Option<Channel>>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<ChannelRow> = channels::table
            .filter(channels::workspace_id.eq(ws.0))
            .filter(channels::id.eq(id.0))
            .select(ChannelRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        Ok(shared_answer(row.map(ChannelRow::into_domain).transpose()?, count))
    }
}

/// The listing query, run once for a batch of identical requests.
struct ChannelLists {
    db: Db,
}

#[async_trait]
impl Batch for ChannelLists {
    type Key = (WorkspaceId, ChannelFilter, PageRequest);
    type Output = Page<Channel>;

    async fn run(&self, &(ws, filter, page): &Self::Key, count: usize) -> Result<Vec<Page<Channel>>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let mut q = channels::table
            .filter(channels::workspace_id.eq(ws.0))
            .filter(channels::id.gt(page.after.unwrap_or(0)))
            .select(ChannelRow::as_select())
            .order(channels::id.asc())
            .limit(page.fetch())
            .into_boxed();
        if let Some(t) = filter.channel_type {
            q = q.filter(channels::channel_type.eq(t.as_str()));
        }
        if let Some(s) = filter.status {
            q = q.filter(channels::status.eq(s.as_str()));
        }
        let rows: Vec<ChannelRow> = q.load(&mut conn).await.map_err(repo)?;
        let items = rows.into_iter().map(ChannelRow::into_domain).collect::<Result<Vec<_>, _>>()?;
        Ok(shared_answer(Page::from_rows(items, page, |c| c.id.0), count))
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = channels)]
struct ChannelRow {
    id: i64,
    channel_type: String,
    display_name: String,
    identifier: String,
    status: String,
    created_at: OffsetDateTime,
    default_team_id: Option<i64>,
}

impl ChannelRow {
    fn into_domain(self) -> Result<Channel, RepoError> {
        Ok(Channel {
            id: ChannelId(self.id),
            channel_type: self
                .channel_type
                .parse::<ChannelType>()
                .map_err(|e| repo(anyhow::anyhow!("{}", e.message)))?,
            status: self.status.parse::<ChannelStatus>().map_err(|e| repo(anyhow::anyhow!("{}", e.message)))?,
            display_name: self.display_name,
            identifier: self.identifier,
            created_at: self.created_at,
            default_team_id: self.default_team_id,
        })
    }
}

/// The channels `ids` of `ws`, in id order, in the caller's transaction.
///
/// # Errors
/// Database errors, and a stored type or status the domain does not know.
pub(crate) async fn load_many(conn: &mut AsyncPgConnection, ws: WorkspaceId, ids: &[i64]) -> QueryResult<Vec<Channel>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<ChannelRow> = channels::table
        .filter(channels::workspace_id.eq(ws.0))
        .filter(channels::id.eq_any(ids))
        .order(channels::id)
        .select(ChannelRow::as_select())
        .load(conn)
        .await?;
    rows.into_iter()
        .map(|r| r.into_domain().map_err(|e| diesel::result::Error::DeserializationError(e.0.into())))
        .collect()
}

enum TxError {
    Duplicate,
    NotFound,
    UnknownTeam(i64),
    Db(diesel::result::Error),
}

impl From<diesel::result::Error> for TxError {
    fn from(e: diesel::result::Error) -> Self {
        TxError::Db(e)
    }
}

#[async_trait]
impl ChannelRepository for PgChannelRepository {
    async fn list(
        &self,
        ws: WorkspaceId,
        filter: ChannelFilter,
        page: PageRequest,
    ) -> Result<Page<Channel>, RepoError> {
        self.lists.call((ws, filter, page)).await
    }

    async fn find(&self, ws: WorkspaceId, id: ChannelId) -> Result<Option<Channel>, RepoError> {
        self.finds.call((ws, id)).await
    }

    async fn reserve_id(&self) -> Result<ChannelId, RepoError> {
        Ok(ChannelId(crate::sealed::reserve_id(&self.db, "channels").await.map_err(repo)?))
    }

    async fn create(
        &self,
        ws: WorkspaceId,
        new: &NewChannel,
        audit: &AuditEntry,
    ) -> Result<Channel, InsertChannelError> {
        let mut conn = self.db.conn().await.map_err(|e| InsertChannelError::Unknown(repo(e)))?;
        let result = conn
            .transaction::<_, TxError, _>(|conn| {
                async move {
                    let row: ChannelRow = diesel::insert_into(channels::table)
                        .values((
                            channels::id.eq(new.id.0),
                            channels::workspace_id.eq(ws.0),
                            channels::channel_type.eq(new.channel_type.as_str()),
                            channels::display_name.eq(&new.display_name),
                            channels::identifier.eq(&new.identifier),
                            channels::status.eq(new.status.as_str()),
                            channels::credentials_encrypted.eq(new.credentials.as_ref().map(|c| c.sealed.clone())),
                            channels::platform_account_id.eq(new.credentials.as_ref().map(|c| c.account_id.clone())),
                            channels::verify_token_digest
                                .eq(new.credentials.as_ref().and_then(|c| c.verify_token_digest.map(|d| d.to_vec()))),
                            channels::waba_id.eq(new.credentials.as_ref().and_then(|c| c.waba_id.clone())),
                            channels::default_team_id.eq(new.default_team_id),
                        ))
                        .returning(ChannelRow::as_returning())
                        .get_result(conn)
                        .await
                        .map_err(|e| match e {
                            // The composite foreign key refuses another workspace's team.
                            diesel::result::Error::DatabaseError(
                                diesel::result::DatabaseErrorKind::ForeignKeyViolation,
                                _,
                            ) => TxError::UnknownTeam(new.default_team_id.unwrap_or_default()),
                            e if unique_violation(&e).is_some() => TxError::Duplicate,
                            e => TxError::Db(e),
                        })?;
                    let channel = row
                        .into_domain()
                        .map_err(|e| TxError::Db(diesel::result::Error::QueryBuilderError(e.0.into())))?;
                    outbox::record(conn, ws, OffsetDateTime::now_utc(), &[new.event(&channel)]).await?;
                    crate::audit::write(conn, std::slice::from_ref(audit), Some(channel.id.0)).await?;
                    Ok(channel)
                }
                .scope_boxed()
            })
            .await;
        if result.is_ok() {
            // Its event is committed, and a channel that can send now may have queued messages.
            self.db.wake().outbound_committed();
        }
        result.map_err(|e| match e {
            TxError::Duplicate => InsertChannelError::Duplicate {
                channel_type: new.channel_type.as_str().to_owned(),
                identifier: new.identifier.clone(),
            },
            TxError::UnknownTeam(team) => InsertChannelError::UnknownTeam(team),
            TxError::NotFound => InsertChannelError::Unknown(repo(anyhow::anyhow!("channel vanished"))),
            TxError::Db(e) => InsertChannelError::Unknown(repo(e)),
        })
    }

    async fn update(
        &self,
        ws: WorkspaceId,
        id: ChannelId,
        change: &ChannelChange,
        audit: &[AuditEntry],
    ) -> Result<Channel, ChangeChannelError> {
        let mut conn = self.db.conn().await.map_err(|e| ChangeChannelError::Unknown(repo(e)))?;
        let result = conn
            .transaction::<_, TxError, _>(|conn| {
                async move {
                    let target = channels::table.filter(channels::workspace_id.eq(ws.0)).filter(channels::id.eq(id.0));
                    // One statement per field keeps the types simple; the row lock taken by the first
                    // makes the change atomic.
                    let found: Option<i64> = diesel::update(target)
                        .set(channels::updated_at.eq(diesel::dsl::now))
                        .returning(channels::id)
                        .get_result(conn)
                        .await
                        .optional()?;
                    found.ok_or(TxError::NotFound)?;
                    if let Some(name) = &change.display_name {
                        diesel::update(target).set(channels::display_name.eq(name)).execute(conn).await?;
                    }
                    if let Some(status) = change.status {
                        diesel::update(target).set(channels::status.eq(status.as_str())).execute(conn).await?;
                    }
                    if let Some(team) = change.default_team_id {
                        // The composite foreign key refuses another workspace's team.
                        diesel::update(target).set(channels::default_team_id.eq(team)).execute(conn).await.map_err(
                            |e| match e {
                                diesel::result::Error::DatabaseError(
                                    diesel::result::DatabaseErrorKind::ForeignKeyViolation,
                                    _,
                                ) => TxError::UnknownTeam(team.unwrap_or_default()),
                                e => TxError::Db(e),
                            },
                        )?;
                    }
                    if let Some(c) = &change.credentials {
                        let waba_before: Option<String> = target.select(channels::waba_id).first(conn).await?;
                        if !keeps_catalogue(waba_before.as_deref(), c.waba_id.as_deref()) {
                            diesel::delete(
                                whatsapp_templates::table
                                    .filter(whatsapp_templates::workspace_id.eq(ws.0))
                                    .filter(whatsapp_templates::channel_id.eq(id.0)),
                            )
                            .execute(conn)
                            .await?;
                        }
                        diesel::update(target)
                            .set((
                                channels::credentials_encrypted.eq(Some(c.sealed.clone())),
                                channels::platform_account_id.eq(Some(c.account_id.clone())),
                                channels::verify_token_digest.eq(c.verify_token_digest.map(|d| d.to_vec())),
                                channels::send_paused_until.eq(None::<OffsetDateTime>),
                                channels::waba_id.eq(c.waba_id.clone()),
                                // New credentials: the template catalogue is due for a sync.
                                channels::templates_synced_at.eq(None::<OffsetDateTime>),
                            ))
                            .execute(conn)
                            .await
                            .map_err(|e| {
                                if unique_violation(&e).is_some() {
                                    TxError::Duplicate
                                } else {
                                    TxError::Db(e)
                                }
                            })?;
                    }
                    let row: ChannelRow = target.select(ChannelRow::as_select()).first(conn).await?;
                    let channel = row
                        .into_domain()
                        .map_err(|e| TxError::Db(diesel::result::Error::QueryBuilderError(e.0.into())))?;
                    outbox::record(conn, ws, OffsetDateTime::now_utc(), &[change.event(&channel)]).await?;
                    crate::audit::write(conn, audit, None).await?;
                    Ok(channel)
                }
                .scope_boxed()
            })
            .await;
        if result.is_ok() {
            // Its event is committed, and a channel that can send now may have queued messages.
            self.db.wake().outbound_committed();
        }
        result.map_err(|e| match e {
            TxError::Duplicate => ChangeChannelError::AccountInUse,
            TxError::UnknownTeam(team) => ChangeChannelError::UnknownTeam(team),
            TxError::NotFound => ChangeChannelError::NotFound(id),
            TxError::Db(e) => ChangeChannelError::Unknown(repo(e)),
        })
    }
}
