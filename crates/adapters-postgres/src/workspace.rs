//! Workspaces, their admin users and memberships.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::common::ports::PasswordHash;
use domain::members::{decide_admission, AddedAccount, MemberStatus};
use domain::users::{Role, UserId};
use domain::workspace::{
    CreatedWorkspace, InsertWorkspaceError, NewWorkspace, PlanTier, SetPlanError, Workspace, WorkspaceId,
    WorkspaceRepository,
};
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::{repo, unique_violation};
use crate::pool::Db;
use crate::schema::{users, workspace_members, workspaces};

/// [`WorkspaceRepository`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgWorkspaceRepository {
    db: Db,
}

impl PgWorkspaceRepository {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = workspaces)]
struct WorkspaceRow {
    id: i64,
    name: String,
    slug: String,
    is_active: bool,
    plan: String,
    created_at: OffsetDateTime,
}

impl WorkspaceRow {
    fn into_domain(self) -> Result<Workspace, RepoError> {
        Ok(Workspace {
            id: WorkspaceId(self.id),
            plan: self.plan.parse::<PlanTier>().map_err(repo)?,
            name: self.name,
            slug: self.slug,
            is_active: self.is_active,
            created_at: self.created_at,
        })
    }
}

/// A failure inside the creation transaction: either the domain's error or diesel's.
enum TxError {
    Insert(InsertWorkspaceError),
    Db(diesel::result::Error),
}

impl From<diesel::result::Error> for TxError {
    fn from(e: diesel::result::Error) -> Self {
        TxError::Db(e)
    }
}

#[async_trait]
impl WorkspaceRepository for PgWorkspaceRepository {
    async fn insert_with_admin(&self, new: &NewWorkspace) -> Result<CreatedWorkspace, InsertWorkspaceError> {
        let mut conn = self.db.conn().await.map_err(|e| InsertWorkspaceError::Unknown(repo(e)))?;
        let result = conn
            .transaction::<_, TxError, _>(|conn| {
                async move {
                    let workspace_id: i64 = diesel::insert_into(workspaces::table)
                        .values((
                            workspaces::name.eq(new.name.as_str()),
                            workspaces::slug.eq(new.slug.as_str()),
                            workspaces::plan.eq(new.plan.as_str()),
                        ))
                        .returning(workspaces::id)
                        .get_result(conn)
                        .await
                        .map_err(|e| match unique_violation(&e) {
                            Some("workspaces_slug_key") => {
                                TxError::Insert(InsertWorkspaceError::SlugTaken(new.slug.as_str().to_owned()))
                            }
                            _ => TxError::Db(e),
                        })?;
                    // An existing user keeps their password (and name): being made admin of another
                    // workspace must not let an operator reset someone's credentials.
                    let created = diesel::insert_into(users::table)
                        .values((
                            users::email.eq(new.admin_email.as_str()),
                            users::name.eq(new.admin_name.as_str()),
                            users::password_hash.eq(&new.admin_password_hash.0),
                        ))
                        .on_conflict_do_nothing()
                        .execute(conn)
                        .await?;
                    let (user_id, stored): (i64, String) = users::table
                        .filter(
                            diesel::dsl::sql::<diesel::sql_types::Bool>("lower(email) = ")
                                .bind::<diesel::sql_types::Text, _>(new.admin_email.as_str()),
                        )
                        .select((users::id, users::password_hash))
                        .first(conn)
                        .await?;
                    // The operator vouched with a password, as `add-member --password` does: an
                    // account without one of its own (invited somewhere, never accepted) is invited
                    // here too, never given the operator's.
                    let account = AddedAccount::of(created == 1, &PasswordHash(stored));
                    let admission = decide_admission(None, true, account, OffsetDateTime::now_utc())
                        .map_err(|e| TxError::Db(diesel::result::Error::QueryBuilderError(e.to_string().into())))?;
                    diesel::insert_into(workspace_members::table)
                        .values((
                            workspace_members::workspace_id.eq(workspace_id),
                            workspace_members::user_id.eq(user_id),
                            workspace_members::role.eq(Role::Admin.as_str()),
                            workspace_members::status.eq(admission.status.as_str()),
                            workspace_members::joined_at.eq(admission.joined_at),
                        ))
                        .execute(conn)
                        .await?;
                    Ok(CreatedWorkspace {
                        workspace_id: WorkspaceId(workspace_id),
                        user_id: UserId(user_id),
                        admin_invited: admission.status == MemberStatus::Invited,
                    })
                }
                .scope_boxed()
            })
            .await;
        result.map_err(|e| match e {
            TxError::Insert(e) => e,
            TxError::Db(e) => InsertWorkspaceError::Unknown(repo(e)),
        })
    }

    async fn set_plan(
        &self,
        id: WorkspaceId,
        plan: PlanTier,
        audit: &domain::audit::AuditEntry,
    ) -> Result<Workspace, SetPlanError> {
        let mut conn = self.db.conn().await.map_err(|e| SetPlanError::Unknown(repo(e)))?;
        let audit = audit.clone();
        let row: Option<WorkspaceRow> = conn
            .transaction::<_, diesel::result::Error, _>(|conn| {
                async move {
                    let before: Option<String> = workspaces::table
                        .find(id.0)
                        .select(workspaces::plan)
                        .for_update()
                        .first(conn)
                        .await
                        .optional()?;
                    let Some(before) = before else { return Ok(None) };
                    let Some(record) = domain::workspace::plan_change(&before, plan, &audit) else {
                        // The plan it has already: nothing to change or record.
                        let row = workspaces::table.find(id.0).select(WorkspaceRow::as_select()).first(conn).await?;
                        return Ok(Some(row));
                    };
                    let row: WorkspaceRow = diesel::update(workspaces::table.find(id.0))
                        .set((workspaces::plan.eq(plan.as_str()), workspaces::updated_at.eq(diesel::dsl::now)))
                        .returning(WorkspaceRow::as_returning())
                        .get_result(conn)
                        .await?;
                    crate::audit::write(conn, &[record], None).await?;
                    Ok(Some(row))
                }
                .scope_boxed()
            })
            .await
            .map_err(|e| SetPlanError::Unknown(repo(e)))?;
        row.ok_or(SetPlanError::NotFound(id))?.into_domain().map_err(SetPlanError::Unknown)
    }

    async fn find(&self, id: WorkspaceId) -> Result<Option<Workspace>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<WorkspaceRow> = workspaces::table
            .find(id.0)
            .select(WorkspaceRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        row.map(WorkspaceRow::into_domain).transpose()
    }
}
