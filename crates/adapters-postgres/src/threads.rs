//! Threads: status, assignment and labels, and the integrators' listing.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::common::page::{Page, PageRequest};
use domain::teams::AssignmentReason;
use domain::threads::{
    admit_assignee, decide_labels, decide_manual_assignment, decide_status, Assignee, AssigneeFilter, AssigneeStanding,
    KnownLabel, LabelNames, ListThreadsError, ManualAssignment, SetThreadLabelsError, StatusChange, StatusFacts,
    StatusReason, Thread, ThreadChange, ThreadFilter, ThreadRecord, ThreadRepository, ThreadStatus, UpdateThreadError,
};
use domain::webhooks::DomainEvent;
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;
use crate::schema::{ai_agents, labels, teams, thread_labels, threads, workspace_members};
use crate::webhooks::outbox;

mod loading;

use loading::labels_of;
pub(crate) use loading::{load, load_many};

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
    snoozed_until: Option<OffsetDateTime>,
    status_reason: Option<String>,
    team_id: Option<i64>,
    assigned_at: Option<OffsetDateTime>,
    assignment_reason: Option<String>,
    latest_inbound_at: Option<OffsetDateTime>,
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
            labels: Vec::new(),
            snoozed_until: r.snoozed_until,
            status_reason: r.status_reason.as_deref().and_then(StatusReason::stored),
            team_id: r.team_id,
            assigned_at: r.assigned_at,
            assignment_reason: r.assignment_reason.as_deref().and_then(AssignmentReason::stored),
            latest_inbound_at: r.latest_inbound_at,
            sla: None,
        }
    }
}

diesel::define_sql_function!(
    /// SQL `lower(text)`: label names are unique and matched ignoring case.
    fn lower(x: diesel::sql_types::Text) -> diesel::sql_types::Text
);

/// The status facts of a loaded thread.
pub(crate) fn status_facts(t: &Thread) -> StatusFacts {
    StatusFacts { status: ThreadStatus::stored(&t.status), snoozed_until: t.snoozed_until }
}

/// Writes a status change the domain decided (its event is the caller's, after).
pub(crate) async fn apply_status(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    id: i64,
    change: &StatusChange,
) -> diesel::QueryResult<()> {
    diesel::update(threads::table.filter(threads::workspace_id.eq(ws.0)).filter(threads::id.eq(id)))
        .set((
            threads::status.eq(change.status.as_str()),
            threads::snoozed_until.eq(change.snoozed_until),
            threads::status_reason.eq(change.reason.as_str()),
            threads::updated_at.eq(diesel::dsl::now),
        ))
        .execute(conn)
        .await?;
    if let Some(report) = change.report(OffsetDateTime::now_utc()) {
        crate::reports::record(conn, ws, id, report).await?;
    }
    Ok(())
}

/// The assignee columns of `a`: kind, user, team, agent.
pub(crate) fn assignee_columns(a: Option<Assignee>) -> (Option<&'static str>, Option<i64>, Option<i64>, Option<i64>) {
    match a {
        None => (None, None, None, None),
        Some(Assignee::User(u)) => (Some("user"), Some(u), None, None),
        Some(Assignee::Team(t)) => (Some("team"), None, Some(t), None),
        Some(Assignee::AiAgent(a)) => (Some("ai_agent"), None, None, Some(a)),
    }
}

/// Writes a chosen assignee: the thread leaves its team's queue.
async fn apply_manual_assignment(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    id: i64,
    a: &ManualAssignment,
    now: OffsetDateTime,
) -> diesel::QueryResult<()> {
    let (kind, user, team, agent) = assignee_columns(a.assignee);
    let target = threads::table.filter(threads::workspace_id.eq(ws.0)).filter(threads::id.eq(id));
    diesel::update(target)
        .set((
            threads::assignee_type.eq(kind),
            threads::assignee_user_id.eq(user),
            threads::assignee_team_id.eq(team),
            threads::assignee_ai_agent_id.eq(agent),
            threads::assignment_reason.eq(a.reason.as_str()),
            threads::assigned_at.eq(now),
            threads::waiting_since.eq(None::<OffsetDateTime>),
            threads::updated_at.eq(diesel::dsl::now),
        ))
        .execute(conn)
        .await?;
    if let Some(team) = a.team_id {
        diesel::update(target).set(threads::team_id.eq(team)).execute(conn).await?;
    }
    Ok(())
}

/// A wanted label name with the label it matched.
#[derive(diesel::QueryableByName)]
struct KnownLabelRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    asked_as: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::Text)]
    name: String,
}

/// The id of the workspace's label named `name` (ignoring case: both sides lowered by PostgreSQL,
/// as its unique index `labels_name_key` does, so a name given as stored is always found).
async fn label_id(conn: &mut AsyncPgConnection, ws: WorkspaceId, name: &str) -> diesel::QueryResult<Option<i64>> {
    labels::table
        .filter(labels::workspace_id.eq(ws.0))
        .filter(lower(labels::name).eq(lower(name)))
        .select(labels::id)
        .first(conn)
        .await
        .optional()
}

/// How `a` stands in `ws` ([`admit_assignee`] decides whether it may take threads).
async fn standing(conn: &mut AsyncPgConnection, ws: WorkspaceId, a: Assignee) -> diesel::QueryResult<AssigneeStanding> {
    Ok(match a {
        Assignee::User(id) => workspace_members::table
            .filter(workspace_members::workspace_id.eq(ws.0))
            .filter(workspace_members::user_id.eq(id))
            .select(workspace_members::is_active)
            .first::<bool>(conn)
            .await
            .optional()?
            .map_or(AssigneeStanding::Unknown, |active| AssigneeStanding::Member { active }),
        // `FOR KEY SHARE`: a deletion of the team waits for this assignment and then unassigns
        // the thread with the rest (it reads the team's threads again under the team's lock);
        // without it the deletion could commit in between and the write fail on the foreign key.
        Assignee::Team(id) => teams::table
            .filter(teams::workspace_id.eq(ws.0))
            .filter(teams::id.eq(id))
            .select(teams::id)
            .for_key_share()
            .first::<i64>(conn)
            .await
            .optional()?
            .map_or(AssigneeStanding::Unknown, |_| AssigneeStanding::Team),
        Assignee::AiAgent(id) => ai_agents::table
            .filter(ai_agents::workspace_id.eq(ws.0))
            .filter(ai_agents::id.eq(id))
            .select(ai_agents::status)
            .first::<String>(conn)
            .await
            .optional()?
            .map_or(AssigneeStanding::Unknown, |status| AssigneeStanding::agent(&status)),
    })
}

enum TxError<E> {
    Update(E),
    Db(diesel::result::Error),
}

impl<E> From<diesel::result::Error> for TxError<E> {
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

    async fn update(
        &self,
        ws: WorkspaceId,
        id: i64,
        change: &ThreadChange,
        now: OffsetDateTime,
    ) -> Result<Thread, UpdateThreadError> {
        let mut pooled = self.db.conn().await.map_err(|e| UpdateThreadError::Unknown(repo(e)))?;
        let conn: &mut AsyncPgConnection = &mut pooled;
        let change = change.clone();
        let result = conn
            .transaction::<_, TxError<UpdateThreadError>, _>(|conn| {
                async move {
                    let before =
                        load(conn, ws, id, true).await?.ok_or(TxError::Update(UpdateThreadError::NotFound(id)))?;
                    let status = change.status.and_then(|wanted| decide_status(status_facts(&before), wanted));
                    let assignment =
                        change.assignee.and_then(|wanted| decide_manual_assignment(before.assignee, wanted));
                    if let Some(a) = assignment.and_then(|a| a.assignee) {
                        admit_assignee(a, standing(conn, ws, a).await?).map_err(TxError::Update)?;
                    }
                    if let Some(status) = &status {
                        apply_status(conn, ws, id, status).await?;
                    }
                    if let Some(assignment) = &assignment {
                        apply_manual_assignment(conn, ws, id, assignment, now).await?;
                    }
                    let breaches = match &status {
                        Some(change) => {
                            let from = ThreadStatus::stored(&before.status);
                            crate::sla::tracking::on_status(conn, ws, id, from, change.status).await?
                        }
                        None => crate::sla::tracking::Breaches::default(),
                    };
                    let after = load(conn, ws, id, false).await?.ok_or(TxError::Db(diesel::result::Error::NotFound))?;
                    // docs/contract.md, "Events as a contract": `data` is exactly the Thread record.
                    let record = ThreadRecord::from(after.clone());
                    let events: Vec<DomainEvent> = status
                        .map(|s| s.event(record.clone()))
                        .into_iter()
                        .chain(assignment.map(|a| a.event(record)))
                        .collect();
                    outbox::record(conn, ws, OffsetDateTime::now_utc(), &events).await?;
                    crate::sla::tracking::announce(conn, ws, breaches).await?;
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

    async fn list(
        &self,
        ws: WorkspaceId,
        filter: &ThreadFilter,
        page: PageRequest,
    ) -> Result<Page<Thread>, ListThreadsError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let label = match &filter.label {
            None => None,
            Some(name) => Some(
                label_id(&mut conn, ws, name)
                    .await
                    .map_err(repo)?
                    .ok_or_else(|| ListThreadsError::UnknownLabel(name.clone()))?,
            ),
        };
        // Newest first by id, after the cursor: each filter has an index ending in the id
        // (migration 2026-11-24-000300), so any page is one range scan of `limit + 1` entries.
        let mut q = threads::table
            .filter(threads::workspace_id.eq(ws.0))
            .select(ThreadRow::as_select())
            .order(threads::id.desc())
            .limit(page.fetch())
            .into_boxed();
        if let Some(after) = page.after {
            q = q.filter(threads::id.lt(after));
        }
        if let Some(status) = &filter.status {
            q = q.filter(threads::status.eq(status.clone()));
        }
        if let Some(channel) = filter.channel_id {
            q = q.filter(threads::channel_id.eq(channel));
        }
        if let Some(contact) = filter.contact_id {
            q = q.filter(threads::contact_id.eq(contact));
        }
        q = match filter.assignee {
            None => q,
            Some(AssigneeFilter::AnyOf("user")) => q.filter(threads::assignee_user_id.is_not_null()),
            Some(AssigneeFilter::AnyOf("team")) => q.filter(threads::assignee_team_id.is_not_null()),
            Some(AssigneeFilter::AnyOf(_)) => q.filter(threads::assignee_ai_agent_id.is_not_null()),
            Some(AssigneeFilter::Exactly(Assignee::User(id))) => q.filter(threads::assignee_user_id.eq(id)),
            Some(AssigneeFilter::Exactly(Assignee::Team(id))) => q.filter(threads::assignee_team_id.eq(id)),
            Some(AssigneeFilter::Exactly(Assignee::AiAgent(id))) => q.filter(threads::assignee_ai_agent_id.eq(id)),
        };
        if let Some(label) = label {
            // The cursor bound repeated on thread_labels lets PostgreSQL start the label's index
            // scan at the cursor too (a merge join of the two id orders); without it a deep page
            // reads the label's entries from the newest down (100 ms at 400,000 threads).
            q = q.filter(diesel::dsl::exists(
                thread_labels::table
                    .filter(thread_labels::workspace_id.eq(ws.0))
                    .filter(thread_labels::label_id.eq(label))
                    .filter(thread_labels::thread_id.eq(threads::id))
                    .filter(thread_labels::thread_id.lt(page.after.unwrap_or(i64::MAX))),
            ));
        }
        if let Some(since) = filter.updated_since {
            // A sync asks for the few threads changed since its last poll, scattered over the id
            // order: read them from threads_updated_idx and sort them (`id + 0` keeps PostgreSQL
            // from walking the id index instead, which reads every thread when fewer than a page
            // match: 0.5 s at 400,000 threads). Cost grows with the matches, so a wide window is
            // slower; a full copy lists without `updated_since` (docs/product/threads.md).
            q = q
                .filter(threads::updated_at.ge(since))
                .order(diesel::dsl::sql::<diesel::sql_types::BigInt>("threads.id + 0").desc());
        }
        let rows: Vec<ThreadRow> = q.load(&mut conn).await.map_err(repo)?;
        let page = Page::from_rows(rows.into_iter().map(Thread::from).collect(), page, |t| t.id);
        let ids: Vec<i64> = page.data.iter().map(|t| t.id).collect();
        let mut names = labels_of(&mut conn, ws, &ids).await.map_err(repo)?;
        let mut slas = crate::sla::tracking::slas_of(&mut conn, ws, &ids).await.map_err(repo)?;
        Ok(page.map(|mut t| {
            t.labels = names.remove(&t.id).unwrap_or_default();
            t.sla = slas.remove(&t.id);
            t
        }))
    }

    async fn set_labels(&self, ws: WorkspaceId, id: i64, wanted: &LabelNames) -> Result<Thread, SetThreadLabelsError> {
        let mut pooled = self.db.conn().await.map_err(|e| SetThreadLabelsError::Unknown(repo(e)))?;
        let conn: &mut AsyncPgConnection = &mut pooled;
        let wanted = wanted.clone();
        let result = conn
            .transaction::<_, TxError<SetThreadLabelsError>, _>(|conn| {
                async move {
                    let before =
                        load(conn, ws, id, true).await?.ok_or(TxError::Update(SetThreadLabelsError::NotFound(id)))?;
                    // Each wanted name with the label it names, both lowered by PostgreSQL (as
                    // `label_id` and the unique index on names do).
                    let known: Vec<KnownLabel> = diesel::sql_query(
                        "SELECT n.asked AS asked_as, l.id, l.name FROM unnest($2::text[]) AS n (asked)
                         JOIN labels l ON l.workspace_id = $1 AND lower(l.name) = lower(n.asked)",
                    )
                    .bind::<diesel::sql_types::BigInt, _>(ws.0)
                    .bind::<diesel::sql_types::Array<diesel::sql_types::Text>, _>(wanted.names())
                    .load::<KnownLabelRow>(conn)
                    .await?
                    .into_iter()
                    .map(|r| KnownLabel { asked_as: r.asked_as, id: r.id, name: r.name })
                    .collect();
                    let Some(change) = decide_labels(&wanted, &known, &before.labels).map_err(TxError::Update)? else {
                        return Ok(before);
                    };
                    diesel::delete(
                        thread_labels::table
                            .filter(thread_labels::workspace_id.eq(ws.0))
                            .filter(thread_labels::thread_id.eq(id))
                            .filter(thread_labels::label_id.ne_all(&change.label_ids)),
                    )
                    .execute(conn)
                    .await?;
                    let rows: Vec<_> = change
                        .label_ids
                        .iter()
                        .map(|l| {
                            (
                                thread_labels::workspace_id.eq(ws.0),
                                thread_labels::thread_id.eq(id),
                                thread_labels::label_id.eq(*l),
                            )
                        })
                        .collect();
                    if !rows.is_empty() {
                        diesel::insert_into(thread_labels::table)
                            .values(rows)
                            .on_conflict_do_nothing()
                            .execute(conn)
                            .await?;
                    }
                    diesel::update(threads::table.filter(threads::workspace_id.eq(ws.0)).filter(threads::id.eq(id)))
                        .set(threads::updated_at.eq(diesel::dsl::now))
                        .execute(conn)
                        .await?;
                    let after = load(conn, ws, id, false).await?.ok_or(TxError::Db(diesel::result::Error::NotFound))?;
                    let event = change.event(ThreadRecord::from(after.clone()));
                    outbox::record(conn, ws, OffsetDateTime::now_utc(), &[event]).await?;
                    Ok(after)
                }
                .scope_boxed()
            })
            .await;
        result.map_err(|e| match e {
            TxError::Update(u) => u,
            TxError::Db(e) => SetThreadLabelsError::Unknown(repo(e)),
        })
    }
}
