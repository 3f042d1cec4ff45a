//! SLA policies of a workspace.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::audit::AuditEntry;
use domain::common::page::{Page, PageRequest};
use domain::sla::{
    decide_new_policy, decide_policy_change, CreateSlaPolicyError, DeleteSlaPolicyError, NewSlaPolicy,
    PolicyReferences, SlaPolicy, SlaPolicyChange, SlaPolicyRepository, SlaTargets, UpdateSlaPolicyError,
};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;
use crate::schema::{channels, labels, sla_policies};

diesel::define_sql_function!(
    /// SQL `lower(text)`: label names are unique and matched ignoring case.
    fn lower(x: diesel::sql_types::Text) -> diesel::sql_types::Text
);

/// [`SlaPolicyRepository`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgSlaPolicyRepository {
    db: Db,
}

impl PgSlaPolicyRepository {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = sla_policies)]
struct PolicyRow {
    id: i64,
    name: String,
    first_response_seconds: Option<i64>,
    next_response_seconds: Option<i64>,
    resolution_seconds: Option<i64>,
    business_hours: bool,
    channel_ids: Vec<i64>,
    labels: Vec<String>,
    created_at: OffsetDateTime,
}

impl From<PolicyRow> for SlaPolicy {
    fn from(r: PolicyRow) -> Self {
        SlaPolicy {
            id: r.id,
            name: r.name,
            targets: SlaTargets {
                first_response: r.first_response_seconds,
                next_response: r.next_response_seconds,
                resolution: r.resolution_seconds,
            },
            business_hours: r.business_hours,
            channel_ids: r.channel_ids,
            labels: r.labels,
            created_at: r.created_at,
        }
    }
}

/// Every policy of the workspace, by id (the order in which they are tried at a cycle's start).
pub(crate) async fn all(conn: &mut AsyncPgConnection, ws: WorkspaceId) -> QueryResult<Vec<SlaPolicy>> {
    let rows: Vec<PolicyRow> = sla_policies::table
        .filter(sla_policies::workspace_id.eq(ws.0))
        .order(sla_policies::id.asc())
        .select(PolicyRow::as_select())
        .load(conn)
        .await?;
    Ok(rows.into_iter().map(SlaPolicy::from).collect())
}

/// What the workspace has of `channel_ids` and the labels `names` (matched ignoring case), for
/// the domain's [`decide_new_policy`] and [`decide_policy_change`].
async fn references(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    channel_ids: &[i64],
    names: &[String],
) -> QueryResult<PolicyReferences> {
    let channels: Vec<i64> = channels::table
        .filter(channels::workspace_id.eq(ws.0))
        .filter(channels::id.eq_any(channel_ids))
        .select(channels::id)
        .load(conn)
        .await?;
    let lowered: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
    let labels: Vec<String> = labels::table
        .filter(labels::workspace_id.eq(ws.0))
        .filter(lower(labels::name).eq_any(&lowered))
        .select(labels::name)
        .load(conn)
        .await?;
    Ok(PolicyReferences { channels, labels })
}

enum TxError<E> {
    Refused(E),
    Db(diesel::result::Error),
}

impl<E> From<diesel::result::Error> for TxError<E> {
    fn from(e: diesel::result::Error) -> Self {
        TxError::Db(e)
    }
}

#[async_trait]
impl SlaPolicyRepository for PgSlaPolicyRepository {
    async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<SlaPolicy>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let mut q = sla_policies::table
            .filter(sla_policies::workspace_id.eq(ws.0))
            .select(PolicyRow::as_select())
            .order(sla_policies::id.asc())
            .limit(page.fetch())
            .into_boxed();
        if let Some(after) = page.after {
            q = q.filter(sla_policies::id.gt(after));
        }
        let rows: Vec<PolicyRow> = q.load(&mut conn).await.map_err(repo)?;
        Ok(Page::from_rows(rows, page, |r| r.id).map(SlaPolicy::from))
    }

    async fn create(
        &self,
        ws: WorkspaceId,
        new: &NewSlaPolicy,
        audit: &AuditEntry,
    ) -> Result<SlaPolicy, CreateSlaPolicyError> {
        let mut conn = self.db.conn().await.map_err(|e| CreateSlaPolicyError::Unknown(repo(e)))?;
        let (new, audit) = (new.clone(), audit.clone());
        conn.transaction::<_, TxError<CreateSlaPolicyError>, _>(|conn| {
            async move {
                let found = references(conn, ws, &new.channel_ids, &new.labels).await?;
                let new = decide_new_policy(&new, &found).map_err(TxError::Refused)?;
                let row: PolicyRow = diesel::insert_into(sla_policies::table)
                    .values((
                        sla_policies::workspace_id.eq(ws.0),
                        sla_policies::name.eq(&new.name),
                        sla_policies::first_response_seconds.eq(new.targets.first_response),
                        sla_policies::next_response_seconds.eq(new.targets.next_response),
                        sla_policies::resolution_seconds.eq(new.targets.resolution),
                        sla_policies::business_hours.eq(new.business_hours),
                        sla_policies::channel_ids.eq(&new.channel_ids),
                        sla_policies::labels.eq(&new.labels),
                    ))
                    .returning(PolicyRow::as_returning())
                    .get_result(conn)
                    .await?;
                crate::audit::write(conn, &[audit], Some(row.id)).await?;
                Ok(SlaPolicy::from(row))
            }
            .scope_boxed()
        })
        .await
        .map_err(|e| match e {
            TxError::Refused(e) => e,
            TxError::Db(e) => CreateSlaPolicyError::Unknown(repo(e)),
        })
    }

    async fn update(
        &self,
        ws: WorkspaceId,
        id: i64,
        change: &SlaPolicyChange,
        audit: &AuditEntry,
    ) -> Result<SlaPolicy, UpdateSlaPolicyError> {
        let mut conn = self.db.conn().await.map_err(|e| UpdateSlaPolicyError::Unknown(repo(e)))?;
        let (change, audit) = (change.clone(), audit.clone());
        conn.transaction::<_, TxError<UpdateSlaPolicyError>, _>(|conn| {
            async move {
                let target =
                    sla_policies::table.filter(sla_policies::workspace_id.eq(ws.0)).filter(sla_policies::id.eq(id));
                let before: SlaPolicy = target
                    .select(PolicyRow::as_select())
                    .for_update()
                    .first(conn)
                    .await
                    .optional()?
                    .map(SlaPolicy::from)
                    .ok_or(TxError::Refused(UpdateSlaPolicyError::NotFound(id)))?;
                // What the policy would name after the change: the facts its decision needs.
                let named = change.apply(&before);
                let found = references(conn, ws, &named.channel_ids, &named.labels).await?;
                let after = decide_policy_change(&before, &change, &found).map_err(TxError::Refused)?;
                let row: PolicyRow = diesel::update(target)
                    .set((
                        sla_policies::name.eq(&after.name),
                        sla_policies::first_response_seconds.eq(after.targets.first_response),
                        sla_policies::next_response_seconds.eq(after.targets.next_response),
                        sla_policies::resolution_seconds.eq(after.targets.resolution),
                        sla_policies::business_hours.eq(after.business_hours),
                        sla_policies::channel_ids.eq(&after.channel_ids),
                        sla_policies::labels.eq(&after.labels),
                    ))
                    .returning(PolicyRow::as_returning())
                    .get_result(conn)
                    .await?;
                crate::audit::write(conn, &[audit], None).await?;
                Ok(SlaPolicy::from(row))
            }
            .scope_boxed()
        })
        .await
        .map_err(|e| match e {
            TxError::Refused(e) => e,
            TxError::Db(e) => UpdateSlaPolicyError::Unknown(repo(e)),
        })
    }

    async fn delete(&self, ws: WorkspaceId, id: i64, audit: &AuditEntry) -> Result<(), DeleteSlaPolicyError> {
        let mut conn = self.db.conn().await.map_err(|e| DeleteSlaPolicyError::Unknown(repo(e)))?;
        let audit = audit.clone();
        let n = conn
            .transaction::<_, diesel::result::Error, _>(|conn| {
                async move {
                    // Running SLAs keep their targets; their policy_id becomes null (ON DELETE SET NULL).
                    let n = diesel::delete(
                        sla_policies::table.filter(sla_policies::workspace_id.eq(ws.0)).filter(sla_policies::id.eq(id)),
                    )
                    .execute(conn)
                    .await?;
                    if n > 0 {
                        crate::audit::write(conn, &[audit], None).await?;
                    }
                    Ok(n)
                }
                .scope_boxed()
            })
            .await
            .map_err(|e| DeleteSlaPolicyError::Unknown(repo(e)))?;
        if n == 0 {
            return Err(DeleteSlaPolicyError::NotFound(id));
        }
        Ok(())
    }
}
