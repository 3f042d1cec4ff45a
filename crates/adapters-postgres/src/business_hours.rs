//! A workspace's business hours: one row per workspace that has set them. Setting them also
//! brings the stored business-time figures of the conversation reports in line
//! ([`crate::reports::refigure_business_time`]), in the same transaction.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::audit::AuditEntry;
use domain::business_hours::{BusinessHours, BusinessHoursRecord, BusinessHoursRepo};
use domain::workspace::WorkspaceId;
use domain::RepoError;

use crate::error::repo;
use crate::pool::Db;
use crate::schema::business_hours;

/// [`BusinessHoursRepo`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgBusinessHours {
    db: Db,
}

impl PgBusinessHours {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

/// The stored record of `ws` (`None`: none set), in the caller's transaction.
///
/// # Errors
/// Database errors.
pub async fn load_record(conn: &mut AsyncPgConnection, ws: WorkspaceId) -> QueryResult<Option<BusinessHoursRecord>> {
    let raw: Option<serde_json::Value> = business_hours::table
        .filter(business_hours::workspace_id.eq(ws.0))
        .select(business_hours::record)
        .first(conn)
        .await
        .optional()?;
    Ok(raw.and_then(|v| serde_json::from_value(v).ok()))
}

/// The business hours in force for `ws`, in the caller's transaction ([`BusinessHours::always`]
/// when none are set). What the reports' facts and the SLA due times are computed with.
///
/// The hours are read under the workspace's hours lock, shared: a change of the hours (which
/// takes it exclusively, [`BusinessHoursRepo::set`]) waits for the transactions that computed
/// with the old ones and then refigures what they stored, and those that start meanwhile wait for
/// it and read the new hours. Without it a fact written with the old hours and committed after
/// the change's refiguring kept them for good. (An advisory lock: there may be no row to lock,
/// and every send shares it without writing anything.)
///
/// # Errors
/// Database errors.
pub async fn load(conn: &mut AsyncPgConnection, ws: WorkspaceId) -> QueryResult<BusinessHours> {
    diesel::sql_query(format!("SELECT pg_advisory_xact_lock_shared({HOURS_LOCK})"))
        .bind::<diesel::sql_types::BigInt, _>(ws.0)
        .execute(conn)
        .await?;
    Ok(BusinessHours::from_stored(load_record(conn, ws).await?.as_ref()))
}

/// The key of a workspace's hours lock (`$1`: the workspace id).
const HOURS_LOCK: &str = "hashtextextended('business-hours:' || $1, 0)";

#[async_trait]
impl BusinessHoursRepo for PgBusinessHours {
    async fn get(&self, ws: WorkspaceId) -> Result<Option<BusinessHoursRecord>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        load_record(&mut conn, ws).await.map_err(repo)
    }

    async fn set(
        &self,
        ws: WorkspaceId,
        record: &BusinessHoursRecord,
        hours: &BusinessHours,
        audit: &AuditEntry,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let value = serde_json::to_value(record).map_err(repo)?;
        let (hours, audit) = (hours.clone(), audit.clone());
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                // Exclusive: see [`load`].
                diesel::sql_query(format!("SELECT pg_advisory_xact_lock({HOURS_LOCK})"))
                    .bind::<diesel::sql_types::BigInt, _>(ws.0)
                    .execute(conn)
                    .await?;
                diesel::insert_into(business_hours::table)
                    .values((business_hours::workspace_id.eq(ws.0), business_hours::record.eq(&value)))
                    .on_conflict(business_hours::workspace_id)
                    .do_update()
                    .set((business_hours::record.eq(&value), business_hours::updated_at.eq(diesel::dsl::now)))
                    .execute(conn)
                    .await?;
                crate::reports::refigure_business_time(conn, ws, &hours).await?;
                crate::audit::write(conn, &[audit], None).await?;
                Ok(())
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }
}
