//! Credentials in storage: the one-round-trip verification (`wms_authenticate`, which also runs
//! the rate limit; concurrent checks of one credential share one call, see
//! [`crate::coalesce`]), login tokens, users for sign-in and the sign-in throttle.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{Array, BigInt, Bytea, Double, Integer, Nullable, Text, Timestamptz, Untyped};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::access::ScopeSet;
use domain::auth::{
    CredentialCheck, CredentialOwner, CredentialStore, Identity, LoginThrottleStore, LoginUser, Membership,
    NewUserToken, PresentedToken, Requirements, ThrottlePolicy, ThrottleRecord, ThrottleSubject, TokenDigest,
    TokenKind, UserDirectory,
};
use domain::common::ports::PasswordHash;
use domain::rate_limit::RateLimitStatus;
use domain::users::{Email, Role, UserId};
use domain::workspace::{PlanTier, WorkspaceId};
use domain::RepoError;
use time::OffsetDateTime;

use crate::coalesce::{Batch, Coalescer};
use crate::error::repo;
use crate::pool::Db;
use crate::schema::{user_tokens, users, workspace_members, workspaces};

/// [`CredentialStore`] on PostgreSQL. Concurrent checks of one credential are coalesced into one
/// statement ([`crate::coalesce`]); each statement runs `wms_authenticate` once.
#[derive(Debug, Clone)]
pub struct PgCredentialStore {
    db: Db,
    checks: Coalescer<PgBatchVerify>,
}

impl PgCredentialStore {
    /// A store on `db`.
    pub fn new(db: Db) -> Self {
        Self { checks: Coalescer::new(PgBatchVerify { db: db.clone() }, db.acquire_timeout()), db }
    }
}

/// `wms_authenticate` for a batch of requests of one credential.
struct PgBatchVerify {
    db: Db,
}

#[derive(QueryableByName)]
struct AuthenticateRow {
    #[diesel(sql_type = Text)]
    outcome: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    credential_id: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    workspace_id: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    plan: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    user_id: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    role: Option<String>,
    #[diesel(sql_type = Nullable<Integer>)]
    remaining: Option<i32>,
    #[diesel(sql_type = Nullable<Integer>)]
    reset_after: Option<i32>,
    #[diesel(sql_type = Nullable<Integer>)]
    retry_after: Option<i32>,
    #[diesel(sql_type = BigInt)]
    now_epoch: i64,
    #[diesel(sql_type = Integer)]
    admitted: i32,
    /// A key's granted scopes (NULL: full access, or not a key).
    #[diesel(sql_type = Nullable<Array<Text>>)]
    scopes: Option<Vec<String>>,
}

impl AuthenticateRow {
    /// The verdicts of the `count` requests the statement was asked about, in their order: the
    /// first `admitted` are admitted, with `remaining` counting down to the window's value after
    /// the batch (exactly what one-by-one checks would have reported); the rest are limited.
    fn into_checks(self, needs: &Requirements, count: u32) -> Result<Vec<CredentialCheck>, RepoError> {
        let n = usize::try_from(count).map_err(repo)?;
        let simple = match self.outcome.as_str() {
            "unknown" => Some(CredentialCheck::Unknown),
            "revoked" => Some(CredentialCheck::Revoked),
            "expired" => Some(CredentialCheck::Expired),
            "member_inactive" => Some(CredentialCheck::MemberInactive),
            "workspace_inactive" => Some(CredentialCheck::WorkspaceInactive),
            _ => None,
        };
        if let Some(check) = simple {
            return Ok(vec![check; n]);
        }
        let missing = || repo(anyhow::anyhow!("wms_authenticate returned an incomplete row"));
        let credential_id = self.credential_id.ok_or_else(missing)?;
        let owner = match (self.user_id, self.role.as_deref()) {
            (Some(user), Some(role)) => CredentialOwner::User {
                user_id: UserId(user),
                role: role.parse::<Role>().map_err(|e| repo(anyhow::anyhow!("{e:?}")))?,
            },
            _ => CredentialOwner::ApiKey {
                key_id: credential_id,
                scopes: self
                    .scopes
                    .as_ref()
                    .map_or_else(ScopeSet::full, |s| ScopeSet::from_stored(s.iter().map(String::as_str))),
            },
        };
        let identity = Identity {
            workspace_id: WorkspaceId(self.workspace_id.ok_or_else(missing)?),
            plan: self.plan.ok_or_else(missing)?.parse::<PlanTier>().map_err(repo)?,
            owner,
        };
        let rate = match (needs.rate_limit, self.remaining, self.reset_after) {
            (Some(policy), Some(remaining), Some(reset_after)) => Some(RateLimitStatus {
                policy,
                remaining: u32::try_from(remaining).unwrap_or(0),
                reset_after_secs: u32::try_from(reset_after).unwrap_or(0),
                retry_after_secs: None,
                now_epoch: self.now_epoch,
            }),
            _ => None,
        };
        match (self.outcome.as_str(), rate) {
            ("plan_required", rate) => Ok(vec![CredentialCheck::PlanRequired { identity, rate }; n]),
            ("ok", None) if self.admitted == i32::try_from(count).unwrap_or(i32::MAX) => {
                Ok(vec![CredentialCheck::Admitted { identity, rate: None }; n])
            }
            ("ok" | "limited", Some(rate)) => {
                let admitted = u32::try_from(self.admitted).unwrap_or(0).min(count);
                let retry = self.retry_after.map(|r| u32::try_from(r).unwrap_or(1).max(1));
                if admitted < count && retry.is_none() {
                    return Err(repo(anyhow::anyhow!("wms_authenticate refused requests without retry_after")));
                }
                Ok((0..count)
                    .map(|i| {
                        if i < admitted {
                            let remaining = rate.remaining.saturating_add(admitted - 1 - i);
                            CredentialCheck::Admitted { identity, rate: Some(RateLimitStatus { remaining, ..rate }) }
                        } else {
                            CredentialCheck::Limited {
                                identity,
                                rate: RateLimitStatus { retry_after_secs: retry, ..rate },
                            }
                        }
                    })
                    .collect())
            }
            (other, _) => Err(repo(anyhow::anyhow!(
                "wms_authenticate returned outcome `{other}` admitting {} of {count}",
                self.admitted
            ))),
        }
    }
}

/// `SELECT * FROM wms_authenticate($1, …, $6)` as a statement the connection keeps prepared.
/// (`diesel::sql_query` is never cached: each call would cost a Parse round trip before the
/// execution, two round trips per check instead of one.)
struct Authenticate<'a> {
    kind: &'a str,
    digest: &'a [u8],
    plans: Option<Vec<&'a str>>,
    limit: Option<i32>,
    window: i32,
    count: i32,
}

impl QueryId for Authenticate<'_> {
    type QueryId = Authenticate<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for Authenticate<'_> {
    type SqlType = Untyped;
}

impl QueryFragment<Pg> for Authenticate<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        // The key's scopes ride along in the same statement: a primary-key lookup of the row
        // `wms_authenticate` has just read, so the check stays one round trip.
        out.push_sql("SELECT a.*, k.scopes FROM wms_authenticate(");
        out.push_bind_param::<Text, _>(self.kind)?;
        out.push_sql(", ");
        out.push_bind_param::<Bytea, _>(self.digest)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Array<Text>>, _>(&self.plans)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Integer>, _>(&self.limit)?;
        out.push_sql(", ");
        out.push_bind_param::<Integer, _>(&self.window)?;
        out.push_sql(", ");
        out.push_bind_param::<Integer, _>(&self.count)?;
        out.push_sql(") a LEFT JOIN api_keys k ON a.credential_id = k.id AND a.user_id IS NULL AND a.role IS NULL");
        Ok(())
    }
}

#[async_trait]
impl Batch for PgBatchVerify {
    type Key = (PresentedToken, Requirements);
    type Output = CredentialCheck;

    async fn run(&self, (token, needs): &Self::Key, count: usize) -> Result<Vec<CredentialCheck>, RepoError> {
        let count = u32::try_from(count).map_err(repo)?;
        let kind = match token.kind {
            TokenKind::ApiKey => "api_key",
            TokenKind::User => "user",
        };
        let plans: Option<Vec<&str>> = needs
            .plan
            .map(|required| PlanTier::ALL.into_iter().filter(|p| p.includes(required)).map(PlanTier::as_str).collect());
        let (limit, window) = match needs.rate_limit {
            Some(p) => (Some(i32::try_from(p.limit).unwrap_or(i32::MAX)), i32::try_from(p.window_secs).unwrap_or(3600)),
            None => (None, 3600),
        };
        let query = Authenticate {
            kind,
            digest: token.digest.0.as_slice(),
            plans,
            limit,
            window,
            count: i32::try_from(count).map_err(repo)?,
        };
        let mut conn = self.db.conn().await.map_err(repo)?;
        let verdict: AuthenticateRow = query.get_result(&mut conn).await.map_err(repo)?;
        verdict.into_checks(needs, count)
    }
}

#[async_trait]
impl CredentialStore for PgCredentialStore {
    async fn verify(&self, token: &PresentedToken, needs: &Requirements) -> Result<CredentialCheck, RepoError> {
        self.checks.call((*token, *needs)).await
    }

    async fn insert_user_token(&self, new: &NewUserToken) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        diesel::insert_into(user_tokens::table)
            .values((
                user_tokens::workspace_id.eq(new.workspace_id.0),
                user_tokens::user_id.eq(new.user_id.0),
                user_tokens::token_digest.eq(new.digest.0.as_slice()),
                user_tokens::expires_at.eq(new.expires_at),
            ))
            .execute(&mut conn)
            .await
            .map_err(repo)?;
        Ok(())
    }

    async fn revoke_user_token(&self, digest: &TokenDigest, at: OffsetDateTime) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        diesel::update(
            user_tokens::table
                .filter(user_tokens::token_digest.eq(digest.0.as_slice()))
                .filter(user_tokens::revoked_at.is_null()),
        )
        .set(user_tokens::revoked_at.eq(at))
        .execute(&mut conn)
        .await
        .map_err(repo)?;
        Ok(())
    }
}

/// [`UserDirectory`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgUserDirectory {
    db: Db,
}

impl PgUserDirectory {
    /// A directory on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl UserDirectory for PgUserDirectory {
    async fn find_by_email(&self, email: &Email) -> Result<Option<LoginUser>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<(i64, String, String, String)> = users::table
            .filter(diesel::dsl::sql::<diesel::sql_types::Bool>("lower(email) = ").bind::<Text, _>(email.as_str()))
            .select((users::id, users::email, users::name, users::password_hash))
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        Ok(row.map(|(id, email, name, hash)| LoginUser {
            id: UserId(id),
            email,
            name,
            password_hash: PasswordHash(hash),
        }))
    }

    async fn memberships(&self, user: UserId) -> Result<Vec<Membership>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let rows: Vec<(i64, String, String)> = workspace_members::table
            .inner_join(workspaces::table)
            .filter(workspace_members::user_id.eq(user.0))
            .filter(workspace_members::is_active)
            .filter(workspaces::is_active)
            .order(workspace_members::workspace_id)
            .select((workspace_members::workspace_id, workspaces::plan, workspace_members::role))
            .load(&mut conn)
            .await
            .map_err(repo)?;
        rows.into_iter()
            .map(|(ws, plan, role)| {
                Ok(Membership {
                    workspace_id: WorkspaceId(ws),
                    plan: plan.parse::<PlanTier>().map_err(repo)?,
                    role: role.parse::<Role>().map_err(|e| repo(anyhow::anyhow!("{e:?}")))?,
                })
            })
            .collect()
    }
}

/// [`LoginThrottleStore`] on PostgreSQL, so the throttle holds across instances.
///
/// In front of the database, each process lets at most one reservation per subject at a time
/// reach it, and remembers subjects the database refused until their window ends. A flood of
/// sign-ins for one e-mail or from one address then waits in memory, holding no pooled
/// connection, and all but the first few are refused without a query: without this, 500
/// concurrent attempts held every connection of the pool waiting on the subject's lock, and the
/// rest of the service waited for a connection (`scripts/bench-signin`).
#[derive(Debug, Clone)]
pub struct PgLoginThrottle {
    db: Db,
    gate: Arc<LocalGate>,
}

#[derive(Debug, Default)]
struct LocalGate {
    /// One queue per subject with reservations in flight in this process.
    turns: std::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Subjects the database refused, until their window ends. Never wrong for long: an
    /// exhausted window only shrinks when a reservation made before it was exhausted succeeds.
    refused: std::sync::Mutex<HashMap<String, OffsetDateTime>>,
}

/// Subjects remembered as refused before expired ones are swept.
const MAX_REMEMBERED: usize = 10_000;

impl LocalGate {
    fn refused_for(&self, keys: &[String], now: OffsetDateTime) -> Option<u64> {
        let refused = self.refused.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        keys.iter()
            .filter_map(|k| refused.get(k))
            .map(|until| *until - now)
            .filter(|left| left.is_positive())
            .max()
            .map(|left| u64::try_from(left.whole_seconds()).unwrap_or(0) + u64::from(left.subsec_nanoseconds() > 0))
    }

    fn remember(&self, key: String, until: OffsetDateTime, now: OffsetDateTime) {
        let mut refused = self.refused.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if refused.len() >= MAX_REMEMBERED {
            refused.retain(|_, u| *u > now);
        }
        refused.insert(key, until);
    }

    /// Waits for this process's turn on every subject, in sorted order (so never in a cycle).
    async fn turns(&self, keys: &[String]) -> Vec<tokio::sync::OwnedMutexGuard<()>> {
        let queues: Vec<Arc<tokio::sync::Mutex<()>>> = {
            let mut turns = self.turns.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            keys.iter().map(|k| turns.entry(k.clone()).or_default().clone()).collect()
        };
        let mut guards = Vec::with_capacity(queues.len());
        for q in queues {
            guards.push(q.lock_owned().await);
        }
        guards
    }

    /// Forgets the queues nobody waits in any more.
    fn sweep(&self, keys: &[String]) {
        let mut turns = self.turns.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for k in keys {
            if turns.get(k).is_some_and(|q| Arc::strong_count(q) == 1) {
                turns.remove(k);
            }
        }
    }
}

impl PgLoginThrottle {
    /// A throttle on `db`.
    pub fn new(db: Db) -> Self {
        Self { db, gate: Arc::default() }
    }
}

#[derive(QueryableByName)]
struct ThrottleRow {
    #[diesel(sql_type = Text)]
    subject: String,
    #[diesel(sql_type = Integer)]
    failures: i32,
    #[diesel(sql_type = Timestamptz)]
    window_started_at: OffsetDateTime,
}

/// The class of the advisory locks that serialise reservations of one throttle subject (the
/// two-key form, so it never meets the single-key locks taken elsewhere).
const THROTTLE_LOCK_CLASS: i32 = 0x7717_0001;

#[async_trait]
impl LoginThrottleStore for PgLoginThrottle {
    async fn reserve(
        &self,
        subjects: &[ThrottleSubject],
        now: OffsetDateTime,
        policy: ThrottlePolicy,
    ) -> Result<Option<u64>, RepoError> {
        let mut keys: Vec<String> = subjects.iter().map(|s| s.as_str().to_owned()).collect();
        keys.sort();
        keys.dedup();
        if let Some(retry_after) = self.gate.refused_for(&keys, now) {
            return Ok(Some(retry_after));
        }
        let guards = self.gate.turns(&keys).await;
        let result = match self.gate.refused_for(&keys, now) {
            Some(retry_after) => Ok(Some(retry_after)),
            None => self.reserve_in_db(&keys, now, policy).await,
        };
        drop(guards);
        self.gate.sweep(&keys);
        result
    }

    async fn release(&self, forget: &ThrottleSubject, refund: &[ThrottleSubject]) -> Result<(), RepoError> {
        let refund: Vec<&str> = refund.iter().map(ThrottleSubject::as_str).collect();
        let mut conn = self.db.conn().await.map_err(repo)?;
        diesel::sql_query(
            "WITH gone AS (DELETE FROM login_throttle \
                           WHERE subject = $1 OR (subject = ANY ($2) AND failures <= 1) RETURNING subject) \
             UPDATE login_throttle SET failures = failures - 1 \
             WHERE subject = ANY ($2) AND failures > 1 AND subject NOT IN (SELECT subject FROM gone)",
        )
        .bind::<Text, _>(forget.as_str())
        .bind::<Array<Text>, _>(refund)
        .execute(&mut conn)
        .await
        .map_err(repo)?;
        Ok(())
    }
}

impl PgLoginThrottle {
    /// The reservation itself, atomic across instances; a refusal is remembered by the gate.
    async fn reserve_in_db(
        &self,
        keys: &[String],
        now: OffsetDateTime,
        policy: ThrottlePolicy,
    ) -> Result<Option<u64>, RepoError> {
        let keys = keys.to_vec();
        let gate = self.gate.clone();
        let mut conn = self.db.conn().await.map_err(repo)?;
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                // Reading the counts and counting the attempt must be one step, or concurrent
                // attempts all read the same count (issue: 1,000 at once all passed). A
                // transaction-scoped lock per subject (safe behind PgBouncer's transaction
                // pooling, unlike a session lock), taken in sorted order so that two
                // reservations never wait on each other in a cycle; it also covers subjects
                // without a row yet, which `FOR UPDATE` could not.
                for key in &keys {
                    diesel::sql_query("SELECT pg_advisory_xact_lock($1, hashtext($2))")
                        .bind::<Integer, _>(THROTTLE_LOCK_CLASS)
                        .bind::<Text, _>(key)
                        .execute(conn)
                        .await?;
                }
                let rows: Vec<ThrottleRow> = diesel::sql_query(
                    "SELECT subject, failures, window_started_at FROM login_throttle WHERE subject = ANY ($1)",
                )
                .bind::<Array<Text>, _>(&keys)
                .load(conn)
                .await?;
                let records: Vec<ThrottleRecord> = rows
                    .into_iter()
                    .map(|r| ThrottleRecord {
                        subject: ThrottleSubject::from_stored(r.subject),
                        failures: u32::try_from(r.failures).unwrap_or(0),
                        window_started_at: r.window_started_at,
                    })
                    .collect();
                // Refused: nothing is written, so a refusal never extends the window.
                if let Some(retry_after) = policy.retry_after(&records, now) {
                    for r in &records {
                        if policy.retry_after(std::slice::from_ref(r), now).is_some() {
                            gate.remember(r.subject.as_str().to_owned(), r.window_started_at + policy.window, now);
                        }
                    }
                    return Ok(Some(retry_after));
                }
                diesel::sql_query(
                    "INSERT INTO login_throttle (subject, failures, window_started_at) \
                     SELECT s, 1, $2 FROM unnest($1::text[]) AS s \
                     ON CONFLICT (subject) DO UPDATE SET \
                       failures = CASE WHEN login_throttle.window_started_at <= $2 - make_interval(secs => $3) \
                                       THEN 1 ELSE login_throttle.failures + 1 END, \
                       window_started_at = CASE WHEN login_throttle.window_started_at <= $2 - make_interval(secs => $3) \
                                                THEN $2 ELSE login_throttle.window_started_at END",
                )
                .bind::<Array<Text>, _>(&keys)
                .bind::<Timestamptz, _>(now)
                .bind::<Double, _>(policy.window.as_seconds_f64())
                .execute(conn)
                .await?;
                // Subjects nobody retried for a day are forgotten; cheap thanks to the index.
                diesel::sql_query("DELETE FROM login_throttle WHERE window_started_at < $1 - interval '1 day'")
                    .bind::<Timestamptz, _>(now)
                    .execute(conn)
                    .await?;
                Ok(None)
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }
}

#[cfg(test)]
mod tests {
    use domain::rate_limit::RateLimitPolicy;

    use super::*;

    fn verdict(outcome: &str, remaining: i32, retry_after: Option<i32>, admitted: i32) -> AuthenticateRow {
        AuthenticateRow {
            outcome: outcome.to_owned(),
            credential_id: Some(7),
            workspace_id: Some(1),
            plan: Some("advanced".to_owned()),
            user_id: None,
            role: None,
            remaining: Some(remaining),
            reset_after: Some(3601),
            retry_after,
            now_epoch: 1_800_000_000,
            admitted,
            scopes: None,
        }
    }

    fn needs() -> Requirements {
        Requirements { plan: Some(PlanTier::Advanced), rate_limit: Some(RateLimitPolicy::per_hour(5)) }
    }

    fn summary(checks: &[CredentialCheck]) -> Vec<(char, u32, Option<u32>)> {
        checks
            .iter()
            .map(|c| match c {
                CredentialCheck::Admitted { rate: Some(r), .. } => ('a', r.remaining, r.retry_after_secs),
                CredentialCheck::Limited { rate, .. } => ('l', rate.remaining, rate.retry_after_secs),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_batch_reports_what_one_by_one_checks_would_have() {
        // 3 left before the batch of 5: the first three are admitted (2, 1, 0 left), two refused.
        let checks = verdict("ok", 0, Some(3601), 3).into_checks(&needs(), 5).expect("checks");
        assert_eq!(
            summary(&checks),
            [('a', 2, None), ('a', 1, None), ('a', 0, None), ('l', 0, Some(3601)), ('l', 0, Some(3601))]
        );
        let checks = verdict("ok", 4, None, 1).into_checks(&needs(), 1).expect("checks");
        assert_eq!(summary(&checks), [('a', 4, None)]);
        let checks = verdict("limited", 0, Some(12), 0).into_checks(&needs(), 2).expect("checks");
        assert_eq!(summary(&checks), [('l', 0, Some(12)), ('l', 0, Some(12))]);
    }

    #[test]
    fn refusals_and_unlimited_checks_apply_to_the_whole_batch() {
        let checks = verdict("revoked", 0, None, 0).into_checks(&needs(), 3).expect("checks");
        assert_eq!(checks, vec![CredentialCheck::Revoked; 3]);
        let checks = verdict("plan_required", 5, None, 0).into_checks(&needs(), 2).expect("checks");
        assert!(checks.iter().all(|c| matches!(c, CredentialCheck::PlanRequired { rate: Some(_), .. })));
        let mut v = verdict("ok", 0, None, 4);
        (v.remaining, v.reset_after) = (None, None);
        let checks = v.into_checks(&Requirements::default(), 4).expect("checks");
        assert!(checks.iter().all(|c| matches!(c, CredentialCheck::Admitted { rate: None, .. })));
        // A refusal without a retry delay is a broken row, not a guess.
        assert!(verdict("ok", 0, None, 1).into_checks(&needs(), 2).is_err());
    }
}
