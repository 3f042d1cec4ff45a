//! Users for sign-in: by e-mail, and their active memberships.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::Text;
use diesel_async::RunQueryDsl;
use domain::auth::{LoginUser, Membership, Standing, UserDirectory};
use domain::common::ports::PasswordHash;
use domain::users::{Email, Role, UserId};
use domain::workspace::{PlanTier, WorkspaceId};
use domain::RepoError;

use crate::error::repo;
use crate::pool::Db;
use crate::schema::{users, workspace_members, workspaces};

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
        let rows: Vec<(i64, String, String, bool, bool, Option<String>)> = workspace_members::table
            .inner_join(workspaces::table)
            .filter(workspace_members::user_id.eq(user.0))
            .order(workspace_members::workspace_id)
            .select((
                workspace_members::workspace_id,
                workspaces::plan,
                workspace_members::role,
                workspace_members::is_active,
                workspaces::is_active,
                workspace_members::name,
            ))
            .load(&mut conn)
            .await
            .map_err(repo)?;
        rows.into_iter()
            .map(|(ws, plan, role, member_active, workspace_active, name)| {
                Ok(Membership {
                    workspace_id: WorkspaceId(ws),
                    plan: plan.parse::<PlanTier>().map_err(repo)?,
                    role: role.parse::<Role>().map_err(|e| repo(anyhow::anyhow!("{e:?}")))?,
                    standing: Standing { member_active, workspace_active },
                    name,
                })
            })
            .collect()
    }
}
