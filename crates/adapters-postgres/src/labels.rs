//! Labels of a workspace.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
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

    async fn create(&self, ws: WorkspaceId, new: &NewLabel) -> Result<Label, CreateLabelError> {
        let mut conn = self.db.conn().await.map_err(|e| CreateLabelError::Unknown(repo(e)))?;
        diesel::insert_into(labels::table)
            .values((labels::workspace_id.eq(ws.0), labels::name.eq(&new.name), labels::color.eq(&new.color)))
            .returning(LabelRow::as_returning())
            .get_result(&mut conn)
            .await
            .map(Label::from)
            .map_err(|e| match unique_violation(&e) {
                Some("labels_name_key") => CreateLabelError::Duplicate(new.name.clone()),
                _ => CreateLabelError::Unknown(repo(e)),
            })
    }

    async fn update(&self, ws: WorkspaceId, id: i64, change: &LabelChange) -> Result<Label, UpdateLabelError> {
        let mut conn = self.db.conn().await.map_err(|e| UpdateLabelError::Unknown(repo(e)))?;
        let target = labels::table.filter(labels::workspace_id.eq(ws.0)).filter(labels::id.eq(id));
        // Fields left `None` are not set (the service refuses a change of nothing).
        let name = change.name.clone();
        diesel::update(target)
            .set(LabelChangeset { name: change.name.as_deref(), color: change.color.as_deref() })
            .returning(LabelRow::as_returning())
            .get_result(&mut conn)
            .await
            .optional()
            .map_err(|e| match unique_violation(&e) {
                Some("labels_name_key") => UpdateLabelError::Duplicate(name.clone().unwrap_or_default()),
                _ => UpdateLabelError::Unknown(repo(e)),
            })?
            .map(Label::from)
            .ok_or(UpdateLabelError::NotFound(id))
    }

    async fn delete(&self, ws: WorkspaceId, id: i64) -> Result<(), DeleteLabelError> {
        let mut conn = self.db.conn().await.map_err(|e| DeleteLabelError::Unknown(repo(e)))?;
        // thread_labels rows go with it (ON DELETE CASCADE).
        let n = diesel::delete(labels::table.filter(labels::workspace_id.eq(ws.0)).filter(labels::id.eq(id)))
            .execute(&mut conn)
            .await
            .map_err(|e| DeleteLabelError::Unknown(repo(e)))?;
        if n == 0 {
            return Err(DeleteLabelError::NotFound(id));
        }
        Ok(())
    }
}
