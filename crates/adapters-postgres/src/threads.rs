//! Threads: status and assignment.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::threads::{Assignee, Thread, ThreadChange, ThreadRepository, UpdateThreadError};
use domain::webhooks::EventType;
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;
use crate::rfc3339;
use crate::schema::{ai_agents, teams, threads, workspace_members};
use crate::webhooks::outbox;

/// [`ThreadRepository`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgThreadRepository {
    db: Db,
}

impl PgThreadRepository {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = threads)]
struct ThreadRow {
    id: i64,
    channel_id: i64,
    contact_id: i64,
    status: String,
    unread_count: i32,
    assignee_type: Option<String>,
    assignee_user_id: Option<i64>,
    assignee_team_id: Option<i64>,
    assignee_ai_agent_id: Option<i64>,
    handover_status: Option<String>,
    last_message_at: Option<OffsetDateTime>,
    created_at: OffsetDateTime,
}

impl From<ThreadRow> for Thread {
    fn from(r: ThreadRow) -> Self {
        let assignee = match r.assignee_type.as_deref() {
            Some("user") => r.assignee_user_id.map(Assignee::User),
            Some("team") => r.assignee_team_id.map(Assignee::Team),
            Some("ai_agent") => r.assignee_ai_agent_id.map(Assignee::AiAgent),
            _ => None,
        };
        Thread {
            id: r.id,
            channel_id: r.channel_id,
            contact_id: r.contact_id,
            status: r.status,
            unread_count: r.unread_count,
            assignee,
            handover_status: r.handover_status,
            last_message_at: r.last_message_at,
            created_at: r.created_at,
        }
    }
}

/// The event payload of a thread: the record the API returns.
pub fn thread_json(t: &Thread) -> serde_json::Value {
    serde_json::json!({
        "id": t.id,
        "channel_id": t.channel_id,
        "contact_id": t.contact_id,
        "status": t.status,
        "unread_count": t.unread_count,
        "assignee": assignee_json(t.assignee),
        "handover_status": t.handover_status,
        "last_message_at": t.last_message_at.map(rfc3339),
        "created_at": rfc3339(t.created_at),
    })
}

fn assignee_json(a: Option<Assignee>) -> serde_json::Value {
    a.map_or(serde_json::Value::Null, |a| serde_json::json!({"type": a.kind(), "id": a.id()}))
}

async fn load(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    id: i64,
    lock: bool,
) -> diesel::QueryResult<Option<Thread>> {
    let q =
        threads::table.filter(threads::workspace_id.eq(ws.0)).filter(threads::id.eq(id)).select(ThreadRow::as_select());
    let row = if lock { q.for_update().first(conn).await.optional()? } else { q.first(conn).await.optional()? };
    Ok(row.map(Thread::from))
}

/// Whether `a` may take threads in `ws`: an active member, a team, or an active AI agent.
async fn can_take(conn: &mut AsyncPgConnection, ws: WorkspaceId, a: Assignee) -> diesel::QueryResult<bool> {
    let n: i64 = match a {
        Assignee::User(id) => {
            workspace_members::table
                .filter(workspace_members::workspace_id.eq(ws.0))
                .filter(workspace_members::user_id.eq(id))
                .filter(workspace_members::is_active.eq(true))
                .count()
                .get_result(conn)
                .await?
        }
        Assignee::Team(id) => {
            teams::table.filter(teams::workspace_id.eq(ws.0)).filter(teams::id.eq(id)).count().get_result(conn).await?
        }
        Assignee::AiAgent(id) => {
            ai_agents::table
                .filter(ai_agents::workspace_id.eq(ws.0))
                .filter(ai_agents::id.eq(id))
                .filter(ai_agents::status.eq("active"))
                .count()
                .get_result(conn)
                .await?
        }
    };
    Ok(n > 0)
}

enum TxError {
    Update(UpdateThreadError),
    Db(diesel::result::Error),
}

impl From<diesel::result::Error> for TxError {
    fn from(e: diesel::result::Error) -> Self {
        TxError::Db(e)
    }
}

#[async_trait]
impl ThreadRepository for PgThreadRepository {
    async fn find(&self, ws: WorkspaceId, id: i64) -> Result<Option<Thread>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        load(&mut conn, ws, id, false).await.map_err(repo)
    }

    async fn update(&self, ws: WorkspaceId, id: i64, change: &ThreadChange) -> Result<Thread, UpdateThreadError> {
        let mut pooled = self.db.conn().await.map_err(|e| UpdateThreadError::Unknown(repo(e)))?;
        let conn: &mut AsyncPgConnection = &mut pooled;
        let change = change.clone();
        let result = conn
            .transaction::<_, TxError, _>(|conn| {
                async move {
                    let before =
                        load(conn, ws, id, true).await?.ok_or(TxError::Update(UpdateThreadError::NotFound(id)))?;
                    let target = threads::table.filter(threads::workspace_id.eq(ws.0)).filter(threads::id.eq(id));
                    if let Some(status) = &change.status {
                        diesel::update(target)
                            .set((threads::status.eq(status), threads::updated_at.eq(diesel::dsl::now)))
                            .execute(conn)
                            .await?;
                    }
                    if let Some(assignee) = change.assignee {
                        if let Some(a) = assignee {
                            if !can_take(conn, ws, a).await? {
                                return Err(TxError::Update(UpdateThreadError::UnknownAssignee {
                                    kind: a.kind(),
                                    id: a.id(),
                                }));
                            }
                        }
                        let (kind, user, team, agent) = match assignee {
                            None => (None, None, None, None),
                            Some(Assignee::User(u)) => (Some("user"), Some(u), None, None),
                            Some(Assignee::Team(t)) => (Some("team"), None, Some(t), None),
                            Some(Assignee::AiAgent(a)) => (Some("ai_agent"), None, None, Some(a)),
                        };
                        diesel::update(target)
                            .set((
                                threads::assignee_type.eq(kind),
                                threads::assignee_user_id.eq(user),
                                threads::assignee_team_id.eq(team),
                                threads::assignee_ai_agent_id.eq(agent),
                                threads::updated_at.eq(diesel::dsl::now),
                            ))
                            .execute(conn)
                            .await?;
                    }
                    let after = load(conn, ws, id, false).await?.ok_or(TxError::Db(diesel::result::Error::NotFound))?;
                    if after.status != before.status {
                        let mut data = thread_json(&after);
                        data["previous_status"] = serde_json::json!(before.status);
                        outbox::record(conn, ws, EventType::ThreadStatusChanged, &data).await?;
                    }
                    if after.assignee != before.assignee {
                        let mut data = thread_json(&after);
                        data["previous_assignee"] = assignee_json(before.assignee);
                        outbox::record(conn, ws, EventType::ThreadAssigned, &data).await?;
                    }
                    Ok(after)
                }
                .scope_boxed()
            })
            .await;
        if result.is_ok() {
            self.db.wake().events_committed();
        }
        result.map_err(|e| match e {
            TxError::Update(u) => u,
            TxError::Db(e) => UpdateThreadError::Unknown(repo(e)),
        })
    }
}
