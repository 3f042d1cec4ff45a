//! The audit log in storage. Records of changes are written by [`write`] inside the transaction
//! of the change they describe, so a change that fails or is rolled back leaves none.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Jsonb, Nullable, Text};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::audit::{AuditEntry, AuditEvent, AuditFilter, AuditRepository};
use domain::common::page::{Page, PageRequest};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;
use crate::schema::audit_events;

/// Stores `entries` on `conn` (inside the caller's transaction). An entry whose target id is
/// left open gets `created` (the id of the row the change just inserted). A missing actor label
/// is filled in here: the user's e-mail, the key's name, `wms CLI`, `wms`.
///
/// # Errors
/// On database failure.
pub async fn write(
    conn: &mut AsyncPgConnection,
    entries: &[AuditEntry],
    created: Option<i64>,
) -> diesel::QueryResult<()> {
    for e in entries {
        let target_id = e.target.and_then(|t| t.id.or(created));
        diesel::sql_query(
            "INSERT INTO audit_events (workspace_id, action, actor_type, actor_id, actor_label, target_type, \
             target_id, ip, user_agent, request_id, details) \
             VALUES ($1, $2, $3, $4, COALESCE($5, CASE $3 \
               WHEN 'user' THEN (SELECT email FROM users WHERE id = $4) \
               WHEN 'api_key' THEN (SELECT name FROM api_keys WHERE id = $4 AND workspace_id = $1) \
               WHEN 'cli' THEN 'wms CLI' ELSE 'wms' END), $6, $7, $8, $9, $10, $11)",
        )
        .bind::<BigInt, _>(e.workspace_id.0)
        .bind::<Text, _>(e.action.as_str())
        .bind::<Text, _>(e.context.actor.kind.as_str())
        .bind::<Nullable<BigInt>, _>(e.context.actor.id)
        .bind::<Nullable<Text>, _>(e.context.actor.label.as_deref())
        .bind::<Nullable<Text>, _>(e.target.map(|t| t.kind))
        .bind::<Nullable<BigInt>, _>(target_id)
        .bind::<Nullable<Text>, _>(e.context.ip.as_deref())
        .bind::<Nullable<Text>, _>(e.context.user_agent.as_deref())
        .bind::<Nullable<Text>, _>(e.context.request_id.as_deref())
        .bind::<Jsonb, _>(&e.details)
        .execute(conn)
        .await?;
    }
    Ok(())
}

/// `entry` with one more detail (what only the storage knows, such as the value before).
pub fn with_detail(entry: &AuditEntry, key: &str, value: impl Into<serde_json::Value>) -> AuditEntry {
    entry.with_detail(key, value)
}

/// [`AuditRepository`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgAuditRepository {
    db: Db,
}

impl PgAuditRepository {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = audit_events)]
struct AuditRow {
    id: i64,
    occurred_at: OffsetDateTime,
    action: String,
    actor_type: String,
    actor_id: Option<i64>,
    actor_label: Option<String>,
    target_type: Option<String>,
    target_id: Option<i64>,
    ip: Option<String>,
    user_agent: Option<String>,
    request_id: Option<String>,
    details: serde_json::Value,
}

impl From<AuditRow> for AuditEvent {
    fn from(r: AuditRow) -> Self {
        AuditEvent {
            id: r.id,
            occurred_at: r.occurred_at,
            action: r.action,
            actor_type: r.actor_type,
            actor_id: r.actor_id,
            actor_label: r.actor_label,
            target_type: r.target_type,
            target_id: r.target_id,
            ip: r.ip,
            user_agent: r.user_agent,
            request_id: r.request_id,
            details: r.details,
        }
    }
}

#[async_trait]
impl AuditRepository for PgAuditRepository {
    async fn record(&self, entries: &[AuditEntry]) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let entries = entries.to_vec();
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move { write(conn, &entries, None).await }.scope_boxed()
        })
        .await
        .map_err(repo)
    }

    async fn list(
        &self,
        ws: WorkspaceId,
        filter: &AuditFilter,
        page: PageRequest,
    ) -> Result<Page<AuditEvent>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let mut query = audit_events::table
            .filter(audit_events::workspace_id.eq(ws.0))
            .select(AuditRow::as_select())
            .order(audit_events::id.desc())
            .limit(page.fetch())
            .into_boxed();
        if let Some(action) = filter.action {
            query = query.filter(audit_events::action.eq(action.as_str()));
        }
        if let Some(kind) = filter.actor_type {
            query = query.filter(audit_events::actor_type.eq(kind.as_str()));
        }
        if let Some(since) = filter.since {
            query = query.filter(audit_events::occurred_at.ge(since));
        }
        if let Some(until) = filter.until {
            query = query.filter(audit_events::occurred_at.lt(until));
        }
        if let Some(after) = page.after {
            query = query.filter(audit_events::id.lt(after));
        }
        let rows: Vec<AuditRow> = query.load(&mut conn).await.map_err(repo)?;
        Ok(Page::from_rows(rows, page, |r| r.id).map(AuditEvent::from))
    }

    async fn prune(&self, before: OffsetDateTime) -> Result<u64, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let n = diesel::delete(audit_events::table.filter(audit_events::occurred_at.lt(before)))
            .execute(&mut conn)
            .await
            .map_err(repo)?;
        Ok(n as u64)
    }
}
