//! Workspace members (`/v1/users/{user_id}`).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::members::{ChangeMemberError, MemberChange, MemberProfile, MemberRepository};
use domain::users::{Role, UserId};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;
use crate::schema::{users, workspace_members};

/// [`MemberRepository`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgMemberRepository {
    db: Db,
}

impl PgMemberRepository {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

type ProfileRow = (i64, String, String, String, bool, OffsetDateTime);

fn profile((user_id, email, name, role, active, created_at): ProfileRow) -> Result<MemberProfile, RepoError> {
    Ok(MemberProfile {
        user_id: UserId(user_id),
        role: role.parse::<Role>().map_err(|e| repo(anyhow::anyhow!("{}", e.message)))?,
        email,
        name,
        active,
        created_at,
    })
}

async fn load(conn: &mut AsyncPgConnection, ws: WorkspaceId, user: UserId) -> diesel::QueryResult<Option<ProfileRow>> {
    workspace_members::table
        .inner_join(users::table)
        .filter(workspace_members::workspace_id.eq(ws.0))
        .filter(workspace_members::user_id.eq(user.0))
        .select((
            users::id,
            users::email,
            users::name,
            workspace_members::role,
            workspace_members::is_active,
            workspace_members::created_at,
        ))
        .first(conn)
        .await
        .optional()
}

/// Locks the workspace's active admin memberships and counts the ones other than `user`, so two
/// concurrent demotions serialise and cannot both leave the workspace without an admin.
async fn other_active_admins(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    user: UserId,
) -> diesel::QueryResult<usize> {
    let admins: Vec<i64> = workspace_members::table
        .filter(workspace_members::workspace_id.eq(ws.0))
        .filter(workspace_members::role.eq("admin"))
        .filter(workspace_members::is_active.eq(true))
        .select(workspace_members::user_id)
        .for_update()
        .load(conn)
        .await?;
    Ok(admins.iter().filter(|id| **id != user.0).count())
}

enum TxError {
    Change(ChangeMemberError),
    Db(diesel::result::Error),
}

impl From<diesel::result::Error> for TxError {
    fn from(e: diesel::result::Error) -> Self {
        TxError::Db(e)
    }
}

fn finish<T>(r: Result<T, TxError>) -> Result<T, ChangeMemberError> {
    r.map_err(|e| match e {
        TxError::Change(c) => c,
        TxError::Db(e) => ChangeMemberError::Unknown(repo(e)),
    })
}

#[async_trait]
impl MemberRepository for PgMemberRepository {
    async fn find(&self, ws: WorkspaceId, user: UserId) -> Result<Option<MemberProfile>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        load(&mut conn, ws, user).await.map_err(repo)?.map(profile).transpose()
    }

    async fn update(
        &self,
        ws: WorkspaceId,
        user: UserId,
        change: &MemberChange,
    ) -> Result<MemberProfile, ChangeMemberError> {
        let mut conn = self.db.conn().await.map_err(|e| ChangeMemberError::Unknown(repo(e)))?;
        let row = conn
            .transaction::<_, TxError, _>(|conn| {
                async move {
                    let current =
                        load(conn, ws, user).await?.ok_or(TxError::Change(ChangeMemberError::NotFound(user)))?;
                    let is_active_admin = current.3 == "admin" && current.4;
                    if is_active_admin
                        && change.removes_admin_rights()
                        && other_active_admins(conn, ws, user).await? == 0
                    {
                        return Err(TxError::Change(ChangeMemberError::LastAdmin));
                    }
                    if let Some(role) = change.role {
                        diesel::update(workspace_members::table.find((ws.0, user.0)))
                            .set((
                                workspace_members::role.eq(role.as_str()),
                                workspace_members::updated_at.eq(diesel::dsl::now),
                            ))
                            .execute(conn)
                            .await?;
                    }
                    if let Some(active) = change.active {
                        diesel::update(workspace_members::table.find((ws.0, user.0)))
                            .set((
                                workspace_members::is_active.eq(active),
                                workspace_members::updated_at.eq(diesel::dsl::now),
                            ))
                            .execute(conn)
                            .await?;
                    }
                    if let Some(name) = &change.name {
                        diesel::update(users::table.find(user.0))
                            .set((users::name.eq(name.as_str()), users::updated_at.eq(diesel::dsl::now)))
                            .execute(conn)
                            .await?;
                    }
                    load(conn, ws, user).await?.ok_or(TxError::Db(diesel::result::Error::NotFound))
                }
                .scope_boxed()
            })
            .await;
        profile(finish(row)?).map_err(ChangeMemberError::Unknown)
    }

    async fn remove(&self, ws: WorkspaceId, user: UserId) -> Result<(), ChangeMemberError> {
        let mut conn = self.db.conn().await.map_err(|e| ChangeMemberError::Unknown(repo(e)))?;
        let r = conn
            .transaction::<_, TxError, _>(|conn| {
                async move {
                    let current =
                        load(conn, ws, user).await?.ok_or(TxError::Change(ChangeMemberError::NotFound(user)))?;
                    if current.3 == "admin" && current.4 && other_active_admins(conn, ws, user).await? == 0 {
                        return Err(TxError::Change(ChangeMemberError::LastAdmin));
                    }
                    diesel::delete(workspace_members::table.find((ws.0, user.0))).execute(conn).await?;
                    Ok(())
                }
                .scope_boxed()
            })
            .await;
        finish(r)
    }
}
