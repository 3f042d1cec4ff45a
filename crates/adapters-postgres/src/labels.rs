//! Labels of a workspace.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::audit::AuditEntry;
use domain::common::page::{Page, PageRequest};
use domain::labels::{
    CreateLabelError, DeleteLabelError, Label, LabelChange, LabelRepository, NewLabel, UpdateLabelError,
};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::{repo, unique_violation};
use crate::pool::Db;
use crate::schema::labels;

/// [`LabelRepository`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgLabelRepository {
    db: Db,
}

impl PgLabelRepository {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = labels)]
struct LabelRow {
    id: i64,
    name: String,
    color: String,
    created_at: OffsetDateTime,
}

#[derive(AsChangeset)]
#[diesel(table_name = labels)]
struct LabelChangeset<'a> {
    name: Option<&'a str>,
    color: Option<&'a str>,
}

impl From<LabelRow> for Label {
    fn from(r: LabelRow) -> Self {
        Label { id: r.id, name: r.name, color: r.color, created_at: r.created_at }
    }
}

#[async_trait]
impl LabelRepository for PgLabelRepository {
    async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<Label>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let mut q = labels::table
            .filter(labels::workspace_id.eq(ws.0))
            .select(LabelRow::as_select())
            .order(labels::id.asc())
            .limit(page.fetch())
            .into_boxed();
        if let Some(after) = page.after {
            q = q.filter(labels::id.gt(after));
        }
        let rows: Vec<LabelRow> = q.load(&mut conn).await.map_err(repo)?;
        Ok(Page::from_rows(rows, page, |r| r.id).map(Label::from))
    }

    async fn create(&self, ws: WorkspaceId, new: &NewLabel, audit: &AuditEntry) -> Result<Label, CreateLabelError> {
        let mut conn = self.db.conn().await.map_err(|e| CreateLabelError::Unknown(repo(e)))?;
        let (fields, audit) = (new.clone(), audit.clone());
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                let row: LabelRow = diesel::insert_into(labels::table)
                    .values((
                        labels::workspace_id.eq(ws.0),
                        labels::name.eq(&fields.name),
                        labels::color.eq(&fields.color),
                    ))
                    .returning(LabelRow::as_returning())
                    .get_result(conn)
                    .await?;
                crate::audit::write(conn, &[audit], Some(row.id)).await?;
                Ok(row)
            }
            .scope_boxed()
        })
        .await
        .map(Label::from)
        .map_err(|e| match unique_violation(&e) {
            Some("labels_name_key") => CreateLabelError::Duplicate(new.name.clone()),
            _ => CreateLabelError::Unknown(repo(e)),
        })
    }

    async fn update(
        &self,
        ws: WorkspaceId,
        id: i64,
        change: &LabelChange,
        audit: &AuditEntry,
    ) -> Result<Label, UpdateLabelError> {
        let mut conn = self.db.conn().await.map_err(|e| UpdateLabelError::Unknown(repo(e)))?;
        let name = change.name.clone();
        let (change, audit) = (change.clone(), audit.clone());
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                let target = labels::table.filter(labels::workspace_id.eq(ws.0)).filter(labels::id.eq(id));
                // Fields left `None` are not set (the service refuses a change of nothing).
                let row: Option<LabelRow> = diesel::update(target)
                    .set(LabelChangeset { name: change.name.as_deref(), color: change.color.as_deref() })
                    .returning(LabelRow::as_returning())
                    .get_result(conn)
                    .await
                    .optional()?;
                if row.is_some() {
                    crate::audit::write(conn, &[audit], None).await?;
                }
                Ok(row)
            }
            .scope_boxed()
        })
        .await
        .map_err(|e| match unique_violation(&e) {
            Some("labels_name_key") => UpdateLabelError::Duplicate(name.clone().unwrap_or_default()),
            _ => UpdateLabelError::Unknown(repo(e)),
        })?
        .map(Label::from)
        .ok_or(UpdateLabelError::NotFound(id))
    }

    async fn delete(&self, ws: WorkspaceId, id: i64, audit: &AuditEntry) -> Result<(), DeleteLabelError> {
        let mut conn = self.db.conn().await.map_err(|e| DeleteLabelError::Unknown(repo(e)))?;
        let audit = audit.clone();
        let n = conn
            .transaction::<_, diesel::result::Error, _>(|conn| {
                async move {
                    // thread_labels rows go with it (ON DELETE CASCADE).
                    let n =
                        diesel::delete(labels::table.filter(labels::workspace_id.eq(ws.0)).filter(labels::id.eq(id)))
                            .execute(conn)
                            .await?;
                    if n > 0 {
                        crate::audit::write(conn, &[audit], None).await?;
                    }
                    Ok(n)
                }
                .scope_boxed()
            })
            .await
            .map_err(|e| DeleteLabelError::Unknown(repo(e)))?;
        if n == 0 {
            return Err(DeleteLabelError::NotFound(id));
        }
        Ok(())
    }
}
