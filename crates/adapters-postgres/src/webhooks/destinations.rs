//! [`WebhookRepository`] on PostgreSQL: destinations, their secrets and the delivery log.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::audit::AuditEntry;
use domain::common::page::{Page, PageRequest};
use domain::webhooks::controls::{decide_activation, Activation, DeliveryOrdering, DestinationControls, EventFilter};
use domain::webhooks::stats::StatsFacts;
use domain::webhooks::{
    Delivery, DeliveryId, DestinationChange, DestinationId, NewDestination, StoredSecrets, WebhookDestination,
    WebhookRepository,
};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use super::log;
use crate::error::repo;
use crate::pool::Db;
use crate::schema::webhook_destinations;

/// Webhook destinations in PostgreSQL. Every query is scoped by the workspace.
#[derive(Debug, Clone)]
pub struct PgWebhookRepository {
    db: Db,
}

impl PgWebhookRepository {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = webhook_destinations)]
pub(super) struct DestinationRow {
    id: i64,
    workspace_id: i64,
    url: String,
    platform: String,
    events: Vec<Option<String>>,
    active: bool,
    disabled_reason: Option<String>,
    disabled_at: Option<OffsetDateTime>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
    rate_limit_per_second: Option<i32>,
    max_in_flight: Option<i32>,
    headers: serde_json::Value,
    filter: Option<serde_json::Value>,
    ordering: String,
    headers_encrypted: Option<Vec<u8>>,
}

/// The stored controls; a stored value that no longer parses reads as the default (the
/// columns are only written from validated values).
fn controls(r: &DestinationRow) -> DestinationControls {
    DestinationControls {
        rate_limit_per_second: r.rate_limit_per_second.and_then(|v| u32::try_from(v).ok()),
        max_in_flight: r.max_in_flight.and_then(|v| u32::try_from(v).ok()),
        headers: serde_json::from_value(r.headers.clone()).unwrap_or_default(),
        filter: r.filter.clone().and_then(|f| serde_json::from_value::<EventFilter>(f).ok()),
        ordering: DeliveryOrdering::parse(&r.ordering).unwrap_or_default(),
    }
}

impl From<DestinationRow> for WebhookDestination {
    fn from(r: DestinationRow) -> Self {
        let controls = controls(&r);
        WebhookDestination {
            id: DestinationId(r.id),
            workspace_id: WorkspaceId(r.workspace_id),
            url: r.url,
            platform: r.platform,
            events: r.events.into_iter().flatten().collect(),
            active: r.active,
            disabled_reason: r.disabled_reason,
            disabled_at: r.disabled_at,
            created_at: r.created_at,
            updated_at: r.updated_at,
            controls,
            headers_sealed: r.headers_encrypted,
        }
    }
}

fn headers_json(h: &std::collections::BTreeMap<String, String>) -> serde_json::Value {
    serde_json::to_value(h).unwrap_or_else(|_| serde_json::json!({}))
}

fn filter_json(f: Option<&EventFilter>) -> Option<serde_json::Value> {
    f.and_then(|f| serde_json::to_value(f).ok())
}

/// The destinations `ids` as they are now in this transaction.
pub(crate) async fn load_many(
    conn: &mut diesel_async::AsyncPgConnection,
    ids: &[i64],
) -> diesel::QueryResult<Vec<WebhookDestination>> {
    let rows: Vec<DestinationRow> = webhook_destinations::table
        .filter(webhook_destinations::id.eq_any(ids))
        .order(webhook_destinations::id)
        .select(DestinationRow::as_select())
        .load(conn)
        .await?;
    Ok(rows.into_iter().map(Into::into).collect())
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = webhook_destinations)]
struct ChangeRow<'a> {
    url: Option<&'a str>,
    platform: Option<&'a str>,
    events: Option<&'a [String]>,
    active: Option<bool>,
    rate_limit_per_second: Option<Option<i32>>,
    max_in_flight: Option<Option<i32>>,
    headers: Option<serde_json::Value>,
    headers_encrypted: Option<Option<Vec<u8>>>,
    filter: Option<Option<serde_json::Value>>,
    ordering: Option<&'a str>,
}

#[async_trait]
impl WebhookRepository for PgWebhookRepository {
    async fn reserve_id(&self) -> Result<DestinationId, RepoError> {
        Ok(DestinationId(crate::sealed::reserve_id(&self.db, "webhook_destinations").await.map_err(repo)?))
    }

    async fn insert(
        &self,
        ws: WorkspaceId,
        new: &NewDestination,
        audit: &AuditEntry,
    ) -> Result<WebhookDestination, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let new = new.clone();
        let audit = audit.clone();
        let row: DestinationRow = conn
            .transaction::<_, diesel::result::Error, _>(|conn| {
                async move {
                    let row: DestinationRow = diesel::insert_into(webhook_destinations::table)
                        .values((
                            webhook_destinations::id.eq(new.id.0),
                            webhook_destinations::workspace_id.eq(ws.0),
                            webhook_destinations::url.eq(&new.url),
                            webhook_destinations::platform.eq(&new.platform),
                            webhook_destinations::events.eq(&new.events),
                            webhook_destinations::active.eq(new.active),
                            webhook_destinations::secret_encrypted.eq(&new.secret_sealed),
                            webhook_destinations::rate_limit_per_second
                                .eq(new.controls.rate_limit_per_second.and_then(|v| i32::try_from(v).ok())),
                            webhook_destinations::max_in_flight
                                .eq(new.controls.max_in_flight.and_then(|v| i32::try_from(v).ok())),
                            webhook_destinations::headers.eq(headers_json(&new.controls.headers)),
                            webhook_destinations::headers_encrypted.eq(&new.headers_sealed),
                            webhook_destinations::filter.eq(filter_json(new.controls.filter.as_ref())),
                            webhook_destinations::ordering.eq(new.controls.ordering.as_str()),
                        ))
                        .returning(DestinationRow::as_returning())
                        .get_result(conn)
                        .await?;
                    crate::audit::write(conn, &[audit], Some(row.id)).await?;
                    Ok(row)
                }
                .scope_boxed()
            })
            .await
            .map_err(repo)?;
        Ok(row.into())
    }

    async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<WebhookDestination>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let rows: Vec<DestinationRow> = webhook_destinations::table
            .filter(webhook_destinations::workspace_id.eq(ws.0))
            .filter(webhook_destinations::id.gt(page.after.unwrap_or(0)))
            .order(webhook_destinations::id.asc())
            .limit(page.fetch())
            .select(DestinationRow::as_select())
            .load(&mut conn)
            .await
            .map_err(repo)?;
        Ok(Page::from_rows(rows, page, |r| r.id).map(Into::into))
    }

    async fn find(&self, ws: WorkspaceId, id: DestinationId) -> Result<Option<WebhookDestination>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<DestinationRow> = webhook_destinations::table
            .filter(webhook_destinations::workspace_id.eq(ws.0))
            .filter(webhook_destinations::id.eq(id.0))
            .select(DestinationRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        Ok(row.map(Into::into))
    }

    async fn update(
        &self,
        ws: WorkspaceId,
        id: DestinationId,
        change: &DestinationChange,
        now: OffsetDateTime,
        audit: &AuditEntry,
    ) -> Result<Option<WebhookDestination>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let audit = audit.clone();
        let row = conn
            .transaction::<_, diesel::result::Error, _>(|conn| {
                async move {
                    let target = webhook_destinations::table
                        .filter(webhook_destinations::workspace_id.eq(ws.0))
                        .filter(webhook_destinations::id.eq(id.0));
                    let was_active: Option<bool> =
                        target.select(webhook_destinations::active).for_update().first(conn).await.optional()?;
                    let Some(was_active) = was_active else { return Ok(None) };
                    let set = ChangeRow {
                        url: change.url.as_deref(),
                        platform: change.platform.as_deref(),
                        events: change.events.as_deref(),
                        active: change.active,
                        rate_limit_per_second: change
                            .rate_limit_per_second
                            .map(|v| v.and_then(|v| i32::try_from(v).ok())),
                        max_in_flight: change.max_in_flight.map(|v| v.and_then(|v| i32::try_from(v).ok())),
                        headers: change.headers.as_ref().map(headers_json),
                        headers_encrypted: change.headers_sealed.clone(),
                        filter: change.filter.as_ref().map(|f| filter_json(f.as_ref())),
                        ordering: change.ordering.map(|o| o.as_str()),
                    };
                    let row: DestinationRow = diesel::update(target)
                        .set((set, webhook_destinations::updated_at.eq(now)))
                        .returning(DestinationRow::as_returning())
                        .get_result(conn)
                        .await?;
                    let activation = decide_activation(was_active, change.active);
                    match activation {
                        Activation::Reactivated => {
                            diesel::update(target)
                                .set((
                                    webhook_destinations::disabled_reason.eq(None::<String>),
                                    webhook_destinations::disabled_at.eq(None::<OffsetDateTime>),
                                    webhook_destinations::failing_since.eq(None::<OffsetDateTime>),
                                ))
                                .execute(conn)
                                .await?;
                        }
                        Activation::Deactivated => {
                            diesel::update(target).set(webhook_destinations::disabled_at.eq(now)).execute(conn).await?;
                        }
                        Activation::Unchanged => {}
                    }
                    if let Some(shift) = activation.deliveries() {
                        super::queue::shift(conn, &[id.0], shift, now).await?;
                    }
                    crate::audit::write(conn, &[audit], None).await?;
                    // Re-read: switching changed the deactivation note or time.
                    let row = if activation != Activation::Unchanged {
                        target.select(DestinationRow::as_select()).first(conn).await?
                    } else {
                        row
                    };
                    Ok(Some(row))
                }
                .scope_boxed()
            })
            .await
            .map_err(repo)?;
        Ok(row.map(Into::into))
    }

    async fn delete(&self, ws: WorkspaceId, id: DestinationId, audit: &AuditEntry) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let audit = audit.clone();
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                let url: Option<String> = diesel::delete(
                    webhook_destinations::table
                        .filter(webhook_destinations::workspace_id.eq(ws.0))
                        .filter(webhook_destinations::id.eq(id.0)),
                )
                .returning(webhook_destinations::url)
                .get_result(conn)
                .await
                .optional()?;
                let Some(url) = url else { return Ok(false) };
                // The audit log outlives the destination and is read by others: origin and path only.
                let shown = domain::webhooks::public_url(&url);
                crate::audit::write(conn, &[crate::audit::with_detail(&audit, "url", shown)], None).await?;
                Ok(true)
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }

    async fn secrets<'a>(
        &self,
        ws: WorkspaceId,
        id: DestinationId,
        audit: Option<&'a AuditEntry>,
    ) -> Result<Option<StoredSecrets>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let audit = audit.cloned();
        let row: Option<(Vec<u8>, Option<Vec<u8>>, Option<OffsetDateTime>)> = conn
            .transaction::<_, diesel::result::Error, _>(|conn| {
                async move {
                    let row = webhook_destinations::table
                        .filter(webhook_destinations::workspace_id.eq(ws.0))
                        .filter(webhook_destinations::id.eq(id.0))
                        .select((
                            webhook_destinations::secret_encrypted,
                            webhook_destinations::previous_secret_encrypted,
                            webhook_destinations::previous_secret_expires_at,
                        ))
                        .first(conn)
                        .await
                        .optional()?;
                    if let (Some(_), Some(audit)) = (&row, audit) {
                        crate::audit::write(conn, &[audit], None).await?;
                    }
                    Ok(row)
                }
                .scope_boxed()
            })
            .await
            .map_err(repo)?;
        Ok(row.map(|(current, prev, until)| StoredSecrets { current, previous: prev.zip(until) }))
    }

    async fn rotate_secret(
        &self,
        ws: WorkspaceId,
        id: DestinationId,
        new_sealed: &[u8],
        previous_until: OffsetDateTime,
        now: OffsetDateTime,
        audit: &AuditEntry,
    ) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let audit = audit.clone();
        let new_sealed = new_sealed.to_vec();
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                // One statement: the old current secret becomes the previous one (a second
                // rotation within the overlap drops the oldest, which is what a rotation after a
                // leak wants).
                let n = diesel::update(
                    webhook_destinations::table
                        .filter(webhook_destinations::workspace_id.eq(ws.0))
                        .filter(webhook_destinations::id.eq(id.0)),
                )
                .set((
                    webhook_destinations::previous_secret_encrypted
                        .eq(webhook_destinations::secret_encrypted.nullable()),
                    webhook_destinations::previous_secret_expires_at.eq(previous_until),
                    webhook_destinations::secret_encrypted.eq(&new_sealed),
                    webhook_destinations::updated_at.eq(now),
                ))
                .execute(conn)
                .await?;
                if n > 0 {
                    crate::audit::write(conn, &[audit], None).await?;
                }
                Ok(n > 0)
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }

    async fn deliveries(
        &self,
        ws: WorkspaceId,
        id: DestinationId,
        page: PageRequest,
    ) -> Result<Option<Page<Delivery>>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        log::page(&mut conn, ws, id, page).await.map_err(repo)
    }

    async fn delivery(
        &self,
        ws: WorkspaceId,
        id: DestinationId,
        delivery: DeliveryId,
    ) -> Result<Option<Delivery>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        log::one(&mut conn, ws, id, delivery).await.map_err(repo)
    }

    async fn foreign_channels(&self, ws: WorkspaceId, channel_ids: &[i64]) -> Result<Vec<i64>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let mine: Vec<i64> = crate::schema::channels::table
            .filter(crate::schema::channels::workspace_id.eq(ws.0))
            .filter(crate::schema::channels::id.eq_any(channel_ids))
            .select(crate::schema::channels::id)
            .load(&mut conn)
            .await
            .map_err(repo)?;
        Ok(channel_ids.iter().copied().filter(|id| !mine.contains(id)).collect())
    }

    async fn stats(
        &self,
        ws: WorkspaceId,
        id: DestinationId,
        since: OffsetDateTime,
    ) -> Result<Option<StatsFacts>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        super::stats::load(&mut conn, ws, id, since).await.map_err(repo)
    }
}
