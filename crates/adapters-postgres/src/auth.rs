//! Credentials in storage: the one-round-trip verification (`wms_authenticate`, which also runs
//! the rate limit), login tokens, users for sign-in and the sign-in throttle.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Bytea, Double, Integer, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use domain::auth::{
    CredentialCheck, CredentialOwner, CredentialStore, Identity, LoginThrottleStore, LoginUser, Membership,
    NewUserToken, PresentedToken, Requirements, ThrottleRecord, ThrottleSubject, TokenDigest, TokenKind, UserDirectory,
};
use domain::common::ports::PasswordHash;
use domain::rate_limit::RateLimitStatus;
use domain::users::{Email, Role, UserId};
use domain::workspace::{PlanTier, WorkspaceId};
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;
use crate::schema::{user_tokens, users, workspace_members, workspaces};

/// [`CredentialStore`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgCredentialStore {
    db: Db,
}

impl PgCredentialStore {
    /// A store on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct Verdict {
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
}

impl Verdict {
    fn into_check(self, needs: &Requirements) -> Result<CredentialCheck, RepoError> {
        let simple = match self.outcome.as_str() {
            "unknown" => Some(CredentialCheck::Unknown),
            "revoked" => Some(CredentialCheck::Revoked),
            "expired" => Some(CredentialCheck::Expired),
            "member_inactive" => Some(CredentialCheck::MemberInactive),
            "workspace_inactive" => Some(CredentialCheck::WorkspaceInactive),
            _ => None,
        };
        if let Some(check) = simple {
            return Ok(check);
        }
        let missing = || repo(anyhow::anyhow!("wms_authenticate returned an incomplete row"));
        let credential_id = self.credential_id.ok_or_else(missing)?;
        let owner = match (self.user_id, self.role.as_deref()) {
            (Some(user), Some(role)) => CredentialOwner::User {
                user_id: UserId(user),
                role: role.parse::<Role>().map_err(|e| repo(anyhow::anyhow!("{e:?}")))?,
            },
            _ => CredentialOwner::ApiKey { key_id: credential_id },
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
                retry_after_secs: self.retry_after.map(|r| u32::try_from(r).unwrap_or(1)),
                now_epoch: self.now_epoch,
            }),
            _ => None,
        };
        match (self.outcome.as_str(), rate) {
            ("ok", rate) => Ok(CredentialCheck::Admitted { identity, rate }),
            ("plan_required", rate) => Ok(CredentialCheck::PlanRequired { identity, rate }),
            ("limited", Some(rate)) => Ok(CredentialCheck::Limited { identity, rate }),
            (other, _) => Err(repo(anyhow::anyhow!("wms_authenticate returned outcome `{other}`"))),
        }
    }
}

#[async_trait]
impl CredentialStore for PgCredentialStore {
    async fn verify(&self, token: &PresentedToken, needs: &Requirements) -> Result<CredentialCheck, RepoError> {
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
        let mut conn = self.db.conn().await.map_err(repo)?;
        let verdict: Verdict = diesel::sql_query("SELECT * FROM wms_authenticate($1, $2, $3, $4, $5)")
            .bind::<Text, _>(kind)
            .bind::<Bytea, _>(token.digest.0.as_slice())
            .bind::<Nullable<Array<Text>>, _>(plans)
            .bind::<Nullable<Integer>, _>(limit)
            .bind::<Integer, _>(window)
            .get_result(&mut conn)
            .await
            .map_err(repo)?;
        verdict.into_check(needs)
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
#[derive(Debug, Clone)]
pub struct PgLoginThrottle {
    db: Db,
}

impl PgLoginThrottle {
    /// A throttle on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
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

#[async_trait]
impl LoginThrottleStore for PgLoginThrottle {
    async fn records(&self, subjects: &[ThrottleSubject]) -> Result<Vec<ThrottleRecord>, RepoError> {
        let keys: Vec<&str> = subjects.iter().map(ThrottleSubject::as_str).collect();
        let mut conn = self.db.conn().await.map_err(repo)?;
        let rows: Vec<ThrottleRow> = diesel::sql_query(
            "SELECT subject, failures, window_started_at FROM login_throttle WHERE subject = ANY ($1)",
        )
        .bind::<Array<Text>, _>(keys)
        .load(&mut conn)
        .await
        .map_err(repo)?;
        Ok(rows
            .into_iter()
            .map(|r| ThrottleRecord {
                subject: ThrottleSubject::from_stored(r.subject),
                failures: u32::try_from(r.failures).unwrap_or(0),
                window_started_at: r.window_started_at,
            })
            .collect())
    }

    async fn record_failure(
        &self,
        subjects: &[ThrottleSubject],
        now: OffsetDateTime,
        window: time::Duration,
    ) -> Result<(), RepoError> {
        let keys: Vec<&str> = subjects.iter().map(ThrottleSubject::as_str).collect();
        let mut conn = self.db.conn().await.map_err(repo)?;
        diesel::sql_query(
            "INSERT INTO login_throttle (subject, failures, window_started_at) \
             SELECT s, 1, $2 FROM unnest($1::text[]) AS s \
             ON CONFLICT (subject) DO UPDATE SET \
               failures = CASE WHEN login_throttle.window_started_at <= $2 - make_interval(secs => $3) \
                               THEN 1 ELSE login_throttle.failures + 1 END, \
               window_started_at = CASE WHEN login_throttle.window_started_at <= $2 - make_interval(secs => $3) \
                                        THEN $2 ELSE login_throttle.window_started_at END",
        )
        .bind::<Array<Text>, _>(keys)
        .bind::<Timestamptz, _>(now)
        .bind::<Double, _>(window.as_seconds_f64())
        .execute(&mut conn)
        .await
        .map_err(repo)?;
        // Subjects nobody retried for a day are forgotten; cheap thanks to the index, and only on
        // the failure path.
        diesel::sql_query("DELETE FROM login_throttle WHERE window_started_at < $1 - interval '1 day'")
            .bind::<Timestamptz, _>(now)
            .execute(&mut conn)
            .await
            .map_err(repo)?;
        Ok(())
    }

    async fn clear(&self, subject: &ThrottleSubject) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        diesel::sql_query("DELETE FROM login_throttle WHERE subject = $1")
            .bind::<Text, _>(subject.as_str())
            .execute(&mut conn)
            .await
            .map_err(repo)?;
        Ok(())
    }
}
