//! AI agents of a workspace (read-only for integrators).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use domain::ai_agents::{AiAgent, AiAgentRepository};
use domain::common::page::{Page, PageRequest};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;
use crate::schema::ai_agents;

/// [`AiAgentRepository`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgAiAgentRepository {
    db: Db,
}

impl PgAiAgentRepository {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = ai_agents)]
struct AgentRow {
    id: i64,
    name: String,
    status: String,
    created_at: OffsetDateTime,
}

impl From<AgentRow> for AiAgent {
    fn from(r: AgentRow) -> Self {
        AiAgent { id: r.id, name: r.name, status: r.status, created_at: r.created_at }
    }
}

#[async_trait]
impl AiAgentRepository for PgAiAgentRepository {
    async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<AiAgent>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let mut q = ai_agents::table
            .filter(ai_agents::workspace_id.eq(ws.0))
            .select(AgentRow::as_select())
            .order(ai_agents::id.asc())
            .limit(page.fetch())
            .into_boxed();
        if let Some(after) = page.after {
            q = q.filter(ai_agents::id.gt(after));
        }
        let rows: Vec<AgentRow> = q.load(&mut conn).await.map_err(repo)?;
        Ok(Page::from_rows(rows, page, |r| r.id).map(AiAgent::from))
    }

    async fn find(&self, ws: WorkspaceId, id: i64) -> Result<Option<AiAgent>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        ai_agents::table
            .filter(ai_agents::workspace_id.eq(ws.0))
            .filter(ai_agents::id.eq(id))
            .select(AgentRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map(|r| r.map(AiAgent::from))
            .map_err(repo)
    }
}
