//! The rate limit in storage (`docs/rate-limit.md`): every window is counted by the one SQL function
//! `sql/functions/wms_rate_window.sql`, through `wms_authenticate` (each credential check, read in
//! [`crate::credentials`]) or `wms_admit_member` (a member's request on the settings API, pages,
//! exports and assistant endpoints: [`PgMemberWindows`] here, the same window a member's login
//! tokens count against on `/v1`). Concurrent requests of one member share one statement
//! ([`crate::coalesce`]); which of them are refused is `domain::rate_limit::spread`.

use async_trait::async_trait;
use diesel::sql_types::{BigInt, Integer, Nullable};
use diesel_async::RunQueryDsl;
use domain::rate_limit::{spread, MemberWindows, RateLimitPolicy, RateLimitStatus, WindowCount};
use domain::users::UserId;
use domain::workspace::WorkspaceId;
use domain::RepoError;

use crate::coalesce::{Batch, Coalescer};
use crate::error::repo;
use crate::pool::Db;

/// [`MemberWindows`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgMemberWindows {
    admissions: Coalescer<Admit>,
}

impl PgMemberWindows {
    /// Windows on `db`.
    pub fn new(db: Db) -> Self {
        let wait = db.acquire_timeout();
        Self { admissions: Coalescer::new(Admit { db }, wait) }
    }
}

struct Admit {
    db: Db,
}

#[derive(diesel::QueryableByName)]
struct Window {
    #[diesel(sql_type = Integer)]
    admitted: i32,
    #[diesel(sql_type = Integer)]
    remaining: i32,
    #[diesel(sql_type = Integer)]
    reset_after: i32,
    #[diesel(sql_type = Nullable<Integer>)]
    retry_after: Option<i32>,
    #[diesel(sql_type = BigInt)]
    now_epoch: i64,
}

#[async_trait]
impl Batch for Admit {
    type Key = (WorkspaceId, UserId, RateLimitPolicy);
    type Output = RateLimitStatus;

    async fn run(&self, (ws, user, policy): &Self::Key, count: usize) -> Result<Vec<RateLimitStatus>, RepoError> {
        let n = i32::try_from(count).map_err(repo)?;
        let mut conn = self.db.conn().await.map_err(repo)?;
        let w: Window = diesel::sql_query("SELECT * FROM wms_admit_member($1, $2, $3, $4, $5)")
            .bind::<BigInt, _>(ws.0)
            .bind::<BigInt, _>(user.0)
            .bind::<Integer, _>(i32::try_from(policy.limit).unwrap_or(i32::MAX))
            .bind::<Integer, _>(i32::try_from(policy.window_secs).unwrap_or(3600))
            .bind::<Integer, _>(n)
            .get_result(&mut conn)
            .await
            .map_err(repo)?;
        let window = WindowCount {
            admitted: u32::try_from(w.admitted).unwrap_or(0),
            remaining: u32::try_from(w.remaining).unwrap_or(0),
            reset_after_secs: u32::try_from(w.reset_after).unwrap_or(0),
            retry_after_secs: w.retry_after.map(|r| u32::try_from(r).unwrap_or(1)),
            now_epoch: w.now_epoch,
        };
        // Which of the batch the window admits, and the 429s: the domain's rule.
        spread(*policy, window, n.unsigned_abs()).map_err(|e| repo(anyhow::anyhow!("wms_admit_member: {e}")))
    }
}

#[async_trait]
impl MemberWindows for PgMemberWindows {
    async fn admit(
        &self,
        ws: WorkspaceId,
        user: UserId,
        policy: RateLimitPolicy,
    ) -> Result<RateLimitStatus, RepoError> {
        self.admissions.call((ws, user, policy)).await
    }
}
