//! Credentials in storage: the one-round-trip verification (`wms_authenticate`, which also runs
//! the rate limit's window; concurrent checks of one credential share one call, see
//! [`crate::coalesce`]), login tokens, users for sign-in and the sign-in throttle. The statement
//! reports facts (the credential's owner, workspace and plan, whether the request counted, the
//! window); the domain decides the answers (the policy for the plan, `spread` for the limit).

use async_trait::async_trait;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{Array, BigInt, Bytea, Integer, Nullable, Text, Untyped};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::access::{plans_including, Actor, Caller, ScopeSet};
use domain::audit::AuditEntry;
use domain::auth::{
    CredentialCheck, CredentialStore, NewUserToken, PresentedToken, Requirements, SignInStored, TokenDigest, TokenKind,
};
use domain::rate_limit::{spread, WindowCount};
use domain::users::{Role, UserId};
use domain::workspace::{PlanTier, WorkspaceId};
use domain::RepoError;
use time::OffsetDateTime;

use crate::coalesce::{Batch, Coalescer};
use crate::error::repo;
use crate::pool::Db;
use crate::schema::user_tokens;

mod directory;
pub(crate) mod throttle;

pub use directory::PgUserDirectory;
pub use throttle::PgLoginThrottle;

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
        let actor = match (self.user_id, self.role.as_deref()) {
            (Some(user), Some(role)) => Actor::Member {
                user_id: UserId(user),
                role: role.parse::<Role>().map_err(|e| repo(anyhow::anyhow!("{e:?}")))?,
            },
            _ => Actor::ApiKey {
                key_id: credential_id,
                scopes: self
                    .scopes
                    .as_ref()
                    .map_or_else(ScopeSet::full, |s| ScopeSet::from_stored(s.iter().map(String::as_str))),
            },
        };
        let caller = Caller {
            workspace_id: WorkspaceId(self.workspace_id.ok_or_else(missing)?),
            plan: self.plan.ok_or_else(missing)?.parse::<PlanTier>().map_err(repo)?,
            actor,
            surface: needs.surface,
        };
        let window = match (needs.rate_limit, self.remaining, self.reset_after) {
            (Some(policy), Some(remaining), Some(reset_after)) => Some((
                policy,
                WindowCount {
                    admitted: u32::try_from(self.admitted).unwrap_or(0),
                    remaining: u32::try_from(remaining).unwrap_or(0),
                    reset_after_secs: u32::try_from(reset_after).unwrap_or(0),
                    retry_after_secs: self.retry_after.map(|r| u32::try_from(r).unwrap_or(1)),
                    now_epoch: self.now_epoch,
                },
            )),
            _ => None,
        };
        let rate = window.map(|(policy, w)| w.status(policy));
        match (self.outcome.as_str(), window) {
            ("uncounted", _) => Ok(vec![CredentialCheck::Uncounted { caller, rate }; n]),
            ("ok", None) if self.admitted == i32::try_from(count).unwrap_or(i32::MAX) => {
                Ok(vec![CredentialCheck::Admitted { caller, rate: None }; n])
            }
            // Which of the batch the window admits, and the 429s: the domain's rule.
            ("ok", Some((policy, window))) => Ok(spread(policy, window, count)
                .map_err(|e| repo(anyhow::anyhow!("wms_authenticate: {e}")))?
                .into_iter()
                .map(|rate| CredentialCheck::counted(caller, rate))
                .collect()),
            (other, _) => Err(repo(anyhow::anyhow!(
                "wms_authenticate returned outcome `{other}` admitting {} of {count}",
                self.admitted
            ))),
        }
    }
}

/// `SELECT * FROM wms_authenticate($1, …, $7)` as a statement the connection keeps prepared.
/// (`diesel::sql_query` is never cached: each call would cost a Parse round trip before the
/// execution, two round trips per check instead of one.)
struct Authenticate<'a> {
    kind: &'a str,
    digest: &'a [u8],
    plans: Option<Vec<&'a str>>,
    limit: Option<i32>,
    window: i32,
    count: i32,
    client: Option<String>,
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
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&self.client)?;
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
            // Apps' OAuth tokens live in `oauth_tokens` (crate::oauth), never here.
            TokenKind::AppAccess | TokenKind::AppRefresh => return Ok(vec![CredentialCheck::Unknown; count as usize]),
        };
        // The plans whose requests count: the policy's (`Requirements::plan`).
        let plans: Option<Vec<&str>> =
            needs.plan.map(|required| plans_including(required).into_iter().map(PlanTier::as_str).collect());
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
            client: needs.client.map(|ip| ip.to_string()),
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

    async fn insert_user_token(&self, new: &NewUserToken, audit: &AuditEntry) -> Result<SignInStored, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let (new, audit) = (new.clone(), audit.clone());
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                if !new.proof.holds(&crate::accounts::password_for_sign_in(conn, new.user_id).await?) {
                    return Ok(SignInStored::PasswordChanged);
                }
                diesel::insert_into(user_tokens::table)
                    .values((
                        user_tokens::workspace_id.eq(new.workspace_id.0),
                        user_tokens::user_id.eq(new.user_id.0),
                        user_tokens::token_digest.eq(new.digest.0.as_slice()),
                        user_tokens::expires_at.eq(new.expires_at),
                    ))
                    .execute(conn)
                    .await?;
                crate::audit::write(conn, std::slice::from_ref(&audit), None).await?;
                Ok(SignInStored::Stored)
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
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
        Requirements {
            surface: domain::access::Surface::RestApi,
            plan: Some(PlanTier::Advanced),
            rate_limit: Some(RateLimitPolicy::per_hour(5)),
            client: None,
        }
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
            [('a', 2, None), ('a', 1, None), ('a', 0, None), ('l', 0, Some(3600)), ('l', 0, Some(3600))]
        );
        let checks = verdict("ok", 4, None, 1).into_checks(&needs(), 1).expect("checks");
        assert_eq!(summary(&checks), [('a', 4, None)]);
        let checks = verdict("ok", 0, Some(12), 0).into_checks(&needs(), 2).expect("checks");
        assert_eq!(summary(&checks), [('l', 0, Some(12)), ('l', 0, Some(12))]);
    }

    #[test]
    fn refusals_and_unlimited_checks_apply_to_the_whole_batch() {
        let checks = verdict("revoked", 0, None, 0).into_checks(&needs(), 3).expect("checks");
        assert_eq!(checks, vec![CredentialCheck::Revoked; 3]);
        let checks = verdict("uncounted", 5, None, 0).into_checks(&needs(), 2).expect("checks");
        assert!(checks.iter().all(|c| matches!(c, CredentialCheck::Uncounted { rate: Some(_), .. })));
        let mut v = verdict("ok", 0, None, 4);
        (v.remaining, v.reset_after) = (None, None);
        let checks = v.into_checks(&Requirements { rate_limit: None, ..needs() }, 4).expect("checks");
        assert!(checks.iter().all(|c| matches!(c, CredentialCheck::Admitted { rate: None, .. })));
        // A refusal without a retry delay is a broken row, not a guess.
        assert!(verdict("ok", 0, None, 1).into_checks(&needs(), 2).is_err());
    }
}
