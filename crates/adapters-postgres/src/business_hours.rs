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
/// # Errors
/// Database errors.
pub async fn load(conn: &mut AsyncPgConnection, ws: WorkspaceId) -> QueryResult<BusinessHours> {
    Ok(BusinessHours::from_stored(load_record(conn, ws).await?.as_ref()))
}

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
