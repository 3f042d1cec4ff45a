//! Settings sessions on PostgreSQL (table `sessions`, migration `2026-11-20-000007_sessions`).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::audit::AuditEntry;
use domain::auth::{SignInStored, Standing, StoredMember, TokenDigest, WorkspaceMember};
use domain::sessions::{NewSession, Session, SessionRepository, WorkspaceChoice};
use domain::users::{Role, UserId};
use domain::workspace::{PlanTier, WorkspaceId};
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;
use crate::schema::{sessions, users, workspace_members, workspaces};

/// [`SessionRepository`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgSessionRepository {
    db: Db,
}

impl PgSessionRepository {
    /// Sessions in `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

type SessionRow = (i64, i64, String, Option<i64>, OffsetDateTime, OffsetDateTime, Option<OffsetDateTime>);

fn role(raw: &str) -> Result<Role, RepoError> {
    raw.parse::<Role>().map_err(|e| repo(anyhow::anyhow!("{e:?}")))
}

#[async_trait]
impl SessionRepository for PgSessionRepository {
    async fn insert(&self, new: &NewSession, audit: &[AuditEntry]) -> Result<SignInStored, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let (new, audit) = (new.clone(), audit.to_vec());
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                if !new.proof.holds(&crate::accounts::password_for_sign_in(conn, new.user_id).await?) {
                    return Ok(SignInStored::PasswordChanged);
                }
                diesel::insert_into(sessions::table)
                    .values((
                        sessions::token_digest.eq(new.digest.0.to_vec()),
                        sessions::user_id.eq(new.user_id.0),
                        sessions::workspace_id.eq(new.workspace_id.map(|w| w.0)),
                        sessions::created_at.eq(new.created_at),
                        sessions::expires_at.eq(new.expires_at),
                    ))
                    .execute(conn)
                    .await?;
                crate::audit::write(conn, &audit, None).await?;
                Ok(SignInStored::Stored)
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }

    async fn find(&self, digest: &TokenDigest) -> Result<Option<Session>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<SessionRow> = sessions::table
            .inner_join(users::table)
            .filter(sessions::token_digest.eq(digest.0.to_vec()))
            .select((
                sessions::id,
                sessions::user_id,
                users::email,
                sessions::workspace_id,
                sessions::created_at,
                sessions::expires_at,
                sessions::revoked_at,
            ))
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        Ok(row.map(|(id, user_id, user_email, ws, created_at, expires_at, revoked_at)| Session {
            id,
            user_id: UserId(user_id),
            user_email,
            workspace_id: ws.map(WorkspaceId),
            created_at,
            expires_at,
            revoked_at,
        }))
    }

    async fn set_workspace(&self, digest: &TokenDigest, ws: WorkspaceId) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let n = diesel::update(
            sessions::table
                .filter(sessions::token_digest.eq(digest.0.to_vec()))
                .filter(sessions::workspace_id.is_null())
                .filter(sessions::revoked_at.is_null()),
        )
        .set(sessions::workspace_id.eq(ws.0))
        .execute(&mut conn)
        .await
        .map_err(repo)?;
        Ok(n == 1)
    }

    async fn revoke(&self, digest: &TokenDigest, at: OffsetDateTime) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        diesel::update(
            sessions::table.filter(sessions::token_digest.eq(digest.0.to_vec())).filter(sessions::revoked_at.is_null()),
        )
        .set(sessions::revoked_at.eq(at))
        .execute(&mut conn)
        .await
        .map_err(repo)?;
        Ok(())
    }

    async fn delete_ended(&self, before: OffsetDateTime) -> Result<u64, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let n =
            diesel::delete(sessions::table.filter(sessions::expires_at.lt(before).or(sessions::revoked_at.lt(before))))
                .execute(&mut conn)
                .await
                .map_err(repo)?;
        Ok(n as u64)
    }

    async fn workspaces_of(&self, user: UserId) -> Result<Vec<WorkspaceChoice>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let rows: Vec<(i64, String, String, String, bool, bool)> = workspace_members::table
            .inner_join(workspaces::table)
            .filter(workspace_members::user_id.eq(user.0))
            .order(workspace_members::workspace_id)
            .select((
                workspace_members::workspace_id,
                workspaces::name,
                workspaces::plan,
                workspace_members::role,
                workspace_members::is_active,
                workspaces::is_active,
            ))
            .load(&mut conn)
            .await
            .map_err(repo)?;
        rows.into_iter()
            .map(|(id, name, plan, r, member_active, workspace_active)| {
                Ok(WorkspaceChoice {
                    id: WorkspaceId(id),
                    name,
                    plan: plan.parse::<PlanTier>().map_err(repo)?,
                    role: role(&r)?,
                    standing: Standing { member_active, workspace_active },
                })
            })
            .collect()
    }

    async fn member(&self, ws: WorkspaceId, user: UserId) -> Result<Option<StoredMember>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<(String, String, bool, bool)> = workspace_members::table
            .inner_join(workspaces::table)
            .filter(workspace_members::workspace_id.eq(ws.0))
            .filter(workspace_members::user_id.eq(user.0))
            .select((workspaces::plan, workspace_members::role, workspace_members::is_active, workspaces::is_active))
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        row.map(|(plan, r, member_active, workspace_active)| {
            Ok(StoredMember {
                member: WorkspaceMember {
                    workspace_id: ws,
                    plan: plan.parse::<PlanTier>().map_err(repo)?,
                    user_id: user,
                    role: role(&r)?,
                },
                standing: Standing { member_active, workspace_active },
            })
        })
        .transpose()
    }
}
