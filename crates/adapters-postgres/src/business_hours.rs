//! A workspace's business hours: one row per workspace that has set them. Setting them also
//! brings the stored business-time figures of the conversation reports in line: the change notes
//! which facts were stored before it (`business_hours_refigures`), and they are recomputed in
//! batches of their own ([`refigure_step`]), first within the change's request, for at most
//! [`IN_REQUEST`], then by the reports' worker ([`refigure_pending`]).
//!
//! Why not in the change's transaction: it holds the hours' lock exclusively, and every send of
//! the workspace, which reads the hours under that lock shared, waited for it; at a million
//! messages that was over a minute.

use std::time::{Duration, Instant};

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
use crate::schema::{business_hours, business_hours_refigures};

/// How long a change of the hours goes on refiguring within its own request; whatever is left
/// after it (a workspace with hundreds of thousands of figures) is the reports' worker's.
pub const IN_REQUEST: Duration = Duration::from_secs(2);

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

    async fn set(&self, ws: WorkspaceId, record: &BusinessHoursRecord, audit: &AuditEntry) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let value = serde_json::to_value(record).map_err(repo)?;
        let audit = audit.clone();
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
                // Every figure stored so far was computed with the old hours: those of the
                // transactions that held the lock shared have committed (the lock waited for
                // them), and none can take it before this one commits.
                diesel::sql_query(
                    "INSERT INTO business_hours_refigures (workspace_id, up_to)
                     SELECT $1, last_value FROM conversation_facts_id_seq
                     ON CONFLICT (workspace_id) DO UPDATE
                     SET up_to = excluded.up_to, after = 0, changed_at = now()",
                )
                .bind::<diesel::sql_types::BigInt, _>(ws.0)
                .execute(conn)
                .await?;
                crate::audit::write(conn, &[audit], None).await?;
                Ok(())
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)?;
        let deadline = Instant::now() + IN_REQUEST;
        while Instant::now() < deadline {
            match refigure_step(&mut conn, ws).await {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    // The change is stored; the worker finishes the refiguring.
                    tracing::warn!(error = %e, workspace_id = ws.0, "refiguring after a change of business hours");
                    break;
                }
            }
        }
        Ok(())
    }
}

/// Recomputes one batch of the figures `ws` still has to refigure after a change of its hours, in
/// a transaction of its own, with the hours in force (read under their lock, shared, like a send);
/// whether more are left. `false` too when another instance is on it right now.
///
/// # Errors
/// Database errors.
pub async fn refigure_step(conn: &mut AsyncPgConnection, ws: WorkspaceId) -> QueryResult<bool> {
    conn.transaction::<_, diesel::result::Error, _>(|conn| {
        async move {
            // The hours' lock before the row: a change takes them in the same order.
            let hours = load(conn, ws).await?;
            let job: Option<(i64, i64)> = business_hours_refigures::table
                .filter(business_hours_refigures::workspace_id.eq(ws.0))
                .filter(business_hours_refigures::after.lt(business_hours_refigures::up_to))
                .select((business_hours_refigures::up_to, business_hours_refigures::after))
                .for_update()
                .skip_locked()
                .first(conn)
                .await
                .optional()?;
            let Some((up_to, after)) = job else { return Ok(false) };
            let target = business_hours_refigures::table.filter(business_hours_refigures::workspace_id.eq(ws.0));
            match crate::reports::refigure_batch(conn, ws, &hours, after, up_to, crate::reports::REFIGURE_BATCH).await?
            {
                Some(last) => {
                    diesel::update(target).set(business_hours_refigures::after.eq(last)).execute(conn).await?;
                    Ok(true)
                }
                None => {
                    diesel::update(target).set(business_hours_refigures::after.eq(up_to)).execute(conn).await?;
                    Ok(false)
                }
            }
        }
        .scope_boxed()
    })
    .await
}

/// Finishes every refiguring left after changes of business hours (the reports' worker calls it);
/// how many batches it ran. Any number of instances may run it at once.
///
/// # Errors
/// Infrastructure failures only.
pub async fn refigure_pending(db: &Db) -> Result<usize, RepoError> {
    let mut conn = db.conn().await.map_err(repo)?;
    let workspaces: Vec<i64> = business_hours_refigures::table
        .filter(business_hours_refigures::after.lt(business_hours_refigures::up_to))
        .select(business_hours_refigures::workspace_id)
        .order(business_hours_refigures::workspace_id)
        .load(&mut conn)
        .await
        .map_err(repo)?;
    let mut batches = 0;
    for ws in workspaces {
        while refigure_step(&mut conn, WorkspaceId(ws)).await.map_err(repo)? {
            batches += 1;
        }
    }
    Ok(batches)
}
