//! Teams of a workspace and their members.

use std::collections::HashMap;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::audit::AuditEntry;
use domain::common::page::{Page, PageRequest};
use domain::teams::{
    admit_team_members, decide_team_deletion, AssignmentMode, AssignmentPolicy, CreateTeamError, NewTeam, Team,
    TeamChange, TeamDeletion, TeamLookupError, TeamRepository, TeamThread, UpdateTeamError,
};
use domain::threads::Assignee;
use domain::webhooks::DomainEvent;
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::{repo, unique_violation};
use crate::pool::Db;
use crate::schema::{channels, team_members, teams, threads, workspace_members};
use crate::threads::load_many;
use crate::webhooks::outbox;

/// The unique constraint on a team's name in its workspace.
const NAME_KEY: &str = "teams_workspace_id_name_key";

/// [`TeamRepository`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgTeamRepository {
    db: Db,
}

impl PgTeamRepository {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = teams)]
struct TeamRow {
    id: i64,
    name: String,
    created_at: OffsetDateTime,
    assignment_mode: String,
    assignment_capacity: Option<i32>,
}

/// The teams of `rows` with their members.
async fn with_members(conn: &mut AsyncPgConnection, ws: WorkspaceId, rows: Vec<TeamRow>) -> QueryResult<Vec<Team>> {
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let pairs: Vec<(i64, i64)> = team_members::table
        .filter(team_members::workspace_id.eq(ws.0))
        .filter(team_members::team_id.eq_any(&ids))
        .select((team_members::team_id, team_members::user_id))
        .order((team_members::team_id, team_members::user_id))
        .load(conn)
        .await?;
    let mut members: HashMap<i64, Vec<i64>> = HashMap::new();
    for (team, user) in pairs {
        members.entry(team).or_default().push(user);
    }
    Ok(rows
        .into_iter()
        .map(|r| Team {
            assignment: AssignmentPolicy {
                mode: AssignmentMode::parse(&r.assignment_mode).unwrap_or_default(),
                capacity: r.assignment_capacity,
            },
            id: r.id,
            member_ids: members.remove(&r.id).unwrap_or_default(),
            name: r.name,
            created_at: r.created_at,
        })
        .collect())
}

/// The threads of team `id` (its own or waiting in its queue) and who holds them, locked in id
/// order.
async fn team_threads(conn: &mut AsyncPgConnection, ws: WorkspaceId, id: i64) -> QueryResult<Vec<TeamThreadRow>> {
    threads::table
        .filter(threads::workspace_id.eq(ws.0))
        .filter(threads::team_id.eq(id).or(threads::assignee_team_id.eq(id)))
        .select(TeamThreadRow::as_select())
        .order(threads::id)
        .for_no_key_update()
        .load(conn)
        .await
}

async fn find(conn: &mut AsyncPgConnection, ws: WorkspaceId, id: i64, lock: bool) -> QueryResult<Option<Team>> {
    let q = teams::table.filter(teams::workspace_id.eq(ws.0)).filter(teams::id.eq(id)).select(TeamRow::as_select());
    let row = if lock { q.for_update().first(conn).await.optional()? } else { q.first(conn).await.optional()? };
    let Some(row) = row else { return Ok(None) };
    Ok(with_members(conn, ws, vec![row]).await?.pop())
}

/// Those of `ids` that are members of `ws` ([`admit_team_members`] decides over them).
async fn members_among(conn: &mut AsyncPgConnection, ws: WorkspaceId, ids: &[i64]) -> QueryResult<Vec<i64>> {
    workspace_members::table
        .filter(workspace_members::workspace_id.eq(ws.0))
        .filter(workspace_members::user_id.eq_any(ids))
        .select(workspace_members::user_id)
        .load(conn)
        .await
}

/// Makes `ids` the team's members. Those who stay keep their rows, and with them their turn
/// (`last_assigned_at`): rewriting the list, even unchanged, must not restart round robin.
async fn replace_members(conn: &mut AsyncPgConnection, ws: WorkspaceId, team: i64, ids: &[i64]) -> QueryResult<()> {
    diesel::delete(
        team_members::table
            .filter(team_members::workspace_id.eq(ws.0))
            .filter(team_members::team_id.eq(team))
            .filter(diesel::dsl::not(team_members::user_id.eq_any(ids))),
    )
    .execute(conn)
    .await?;
    if ids.is_empty() {
        return Ok(());
    }
    let rows: Vec<_> = ids
        .iter()
        .map(|u| (team_members::workspace_id.eq(ws.0), team_members::team_id.eq(team), team_members::user_id.eq(*u)))
        .collect();
    diesel::insert_into(team_members::table).values(rows).on_conflict_do_nothing().execute(conn).await?;
    Ok(())
}

/// A thread of a team being deleted: who holds it.
#[derive(Queryable, Selectable)]
#[diesel(table_name = threads)]
struct TeamThreadRow {
    id: i64,
    assignee_type: Option<String>,
    assignee_user_id: Option<i64>,
    assignee_team_id: Option<i64>,
    assignee_ai_agent_id: Option<i64>,
}

impl TeamThreadRow {
    fn fact(&self) -> TeamThread {
        let assignee = match self.assignee_type.as_deref() {
            Some("user") => self.assignee_user_id.map(Assignee::User),
            Some("team") => self.assignee_team_id.map(Assignee::Team),
            Some("ai_agent") => self.assignee_ai_agent_id.map(Assignee::AiAgent),
            _ => None,
        };
        TeamThread { thread_id: self.id, assignee }
    }
}

/// Writes what [`decide_team_deletion`] decided: every thread leaves the team and its queue; those
/// of the team itself become unassigned with the reason.
async fn apply_team_deletion(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    deletion: &TeamDeletion,
) -> QueryResult<()> {
    let all: Vec<i64> = deletion.threads().collect();
    if all.is_empty() {
        return Ok(());
    }
    diesel::update(threads::table.filter(threads::workspace_id.eq(ws.0)).filter(threads::id.eq_any(&all)))
        .set((
            threads::team_id.eq(None::<i64>),
            threads::waiting_since.eq(None::<OffsetDateTime>),
            threads::updated_at.eq(diesel::dsl::now),
        ))
        .execute(conn)
        .await?;
    if !deletion.unassigned.is_empty() {
        diesel::update(
            threads::table.filter(threads::workspace_id.eq(ws.0)).filter(threads::id.eq_any(&deletion.unassigned)),
        )
        .set((
            threads::assignee_type.eq(None::<String>),
            threads::assignee_team_id.eq(None::<i64>),
            threads::assignment_reason.eq(deletion.reason.as_str()),
            threads::assigned_at.eq(diesel::dsl::now),
            threads::updated_at.eq(diesel::dsl::now),
        ))
        .execute(conn)
        .await?;
    }
    Ok(())
}

enum TxError<E> {
    Refused(E),
    Db(diesel::result::Error),
}

impl<E> From<diesel::result::Error> for TxError<E> {
    fn from(e: diesel::result::Error) -> Self {
        TxError::Db(e)
    }
}

#[async_trait]
impl TeamRepository for PgTeamRepository {
    async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<Team>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let mut q = teams::table
            .filter(teams::workspace_id.eq(ws.0))
            .select(TeamRow::as_select())
            .order(teams::id.asc())
            .limit(page.fetch())
            .into_boxed();
        if let Some(after) = page.after {
            q = q.filter(teams::id.gt(after));
        }
        let rows: Vec<TeamRow> = q.load(&mut conn).await.map_err(repo)?;
        let page = Page::from_rows(rows, page, |r| r.id);
        let data = with_members(&mut conn, ws, page.data).await.map_err(repo)?;
        Ok(Page { data, next_cursor: page.next_cursor })
    }

    async fn find(&self, ws: WorkspaceId, id: i64) -> Result<Option<Team>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        find(&mut conn, ws, id, false).await.map_err(repo)
    }

    async fn create(&self, ws: WorkspaceId, new: &NewTeam, audit: &AuditEntry) -> Result<Team, CreateTeamError> {
        let mut pooled = self.db.conn().await.map_err(|e| CreateTeamError::Unknown(repo(e)))?;
        let conn: &mut AsyncPgConnection = &mut pooled;
        let (new, audit) = (new.clone(), audit.clone());
        let result = conn
            .transaction::<_, TxError<CreateTeamError>, _>(|conn| {
                async move {
                    let members = members_among(conn, ws, &new.member_ids).await?;
                    admit_team_members(&new.member_ids, &members)
                        .map_err(|unknown| TxError::Refused(CreateTeamError::UnknownMembers(unknown)))?;
                    let row: TeamRow = diesel::insert_into(teams::table)
                        .values((
                            teams::workspace_id.eq(ws.0),
                            teams::name.eq(&new.name),
                            teams::assignment_mode.eq(new.assignment.mode.as_str()),
                            teams::assignment_capacity.eq(new.assignment.capacity),
                        ))
                        .returning(TeamRow::as_returning())
                        .get_result(conn)
                        .await
                        .map_err(|e| match unique_violation(&e) {
                            Some(NAME_KEY) => TxError::Refused(CreateTeamError::Duplicate(new.name.clone())),
                            _ => TxError::Db(e),
                        })?;
                    replace_members(conn, ws, row.id, &new.member_ids).await?;
                    crate::audit::write(conn, &[audit], Some(row.id)).await?;
                    find(conn, ws, row.id, false).await?.ok_or(TxError::Db(diesel::result::Error::NotFound))
                }
                .scope_boxed()
            })
            .await;
        result.map_err(|e| match e {
            TxError::Refused(e) => e,
            TxError::Db(e) => CreateTeamError::Unknown(repo(e)),
        })
    }

    async fn update(
        &self,
        ws: WorkspaceId,
        id: i64,
        change: &TeamChange,
        audit: &AuditEntry,
    ) -> Result<Team, UpdateTeamError> {
        let mut pooled = self.db.conn().await.map_err(|e| UpdateTeamError::Unknown(repo(e)))?;
        let conn: &mut AsyncPgConnection = &mut pooled;
        let (change, audit) = (change.clone(), audit.clone());
        let result = conn
            .transaction::<_, TxError<UpdateTeamError>, _>(|conn| {
                async move {
                    find(conn, ws, id, true).await?.ok_or(TxError::Refused(UpdateTeamError::NotFound(id)))?;
                    if let Some(name) = &change.name {
                        diesel::update(teams::table.filter(teams::workspace_id.eq(ws.0)).filter(teams::id.eq(id)))
                            .set(teams::name.eq(name))
                            .execute(conn)
                            .await
                            .map_err(|e| match unique_violation(&e) {
                                Some(NAME_KEY) => TxError::Refused(UpdateTeamError::Duplicate(name.clone())),
                                _ => TxError::Db(e),
                            })?;
                    }
                    if let Some(members) = &change.member_ids {
                        let found = members_among(conn, ws, members).await?;
                        admit_team_members(members, &found)
                            .map_err(|unknown| TxError::Refused(UpdateTeamError::UnknownMembers(unknown)))?;
                        replace_members(conn, ws, id, members).await?;
                    }
                    if let Some(policy) = change.assignment {
                        // A rise of capacity, a mode other than manual: the waiting threads are
                        // served by the lifecycle worker's next pass (within a second).
                        diesel::update(teams::table.filter(teams::workspace_id.eq(ws.0)).filter(teams::id.eq(id)))
                            .set((
                                teams::assignment_mode.eq(policy.mode.as_str()),
                                teams::assignment_capacity.eq(policy.capacity),
                            ))
                            .execute(conn)
                            .await?;
                    }
                    crate::audit::write(conn, &[audit], None).await?;
                    find(conn, ws, id, false).await?.ok_or(TxError::Db(diesel::result::Error::NotFound))
                }
                .scope_boxed()
            })
            .await;
        result.map_err(|e| match e {
            TxError::Refused(e) => e,
            TxError::Db(e) => UpdateTeamError::Unknown(repo(e)),
        })
    }

    async fn delete(&self, ws: WorkspaceId, id: i64, audit: &AuditEntry) -> Result<(), TeamLookupError> {
        let audit = audit.clone();
        let mut pooled = self.db.conn().await.map_err(|e| TeamLookupError::Unknown(repo(e)))?;
        let conn: &mut AsyncPgConnection = &mut pooled;
        let result = conn
            .transaction::<_, TxError<TeamLookupError>, _>(|conn| {
                async move {
                    // Lock order: threads, then the team, as every assignment takes them (a
                    // reopen locks its thread, then its team). Taking the team first would let a
                    // reopen hold a thread this deletion waits for while waiting for the team.
                    team_threads(conn, ws, id).await?;
                    find(conn, ws, id, true).await?.ok_or(TxError::Refused(TeamLookupError::NotFound(id)))?;
                    // The facts: the team's threads and who holds them, locked (the foreign key
                    // alone would leave those assigned to the team `team` with no id). Read again
                    // under the team's lock: a thread assigned to it meanwhile is among them now,
                    // and no other can join until this commits.
                    let rows = team_threads(conn, ws, id).await?;
                    let facts: Vec<TeamThread> = rows.iter().map(TeamThreadRow::fact).collect();
                    // The channels it is the default team of (locked: their record changes).
                    let defaults: Vec<i64> = channels::table
                        .filter(channels::workspace_id.eq(ws.0))
                        .filter(channels::default_team_id.eq(id))
                        .order(channels::id)
                        .select(channels::id)
                        .for_no_key_update()
                        .load(conn)
                        .await?;
                    let deletion = decide_team_deletion(id, &facts, &defaults);
                    apply_team_deletion(conn, ws, &deletion).await?;
                    // The foreign key clears the channels' `default_team_id`.
                    diesel::delete(teams::table.filter(teams::workspace_id.eq(ws.0)).filter(teams::id.eq(id)))
                        .execute(conn)
                        .await?;
                    // docs/contract.md: each thread's `thread.assigned` is its plain record,
                    // unassigned with `assignment_reason` `team_deleted`; each channel's
                    // `channel.updated` its record without the default team.
                    let mut events: Vec<DomainEvent> = load_many(conn, ws, &deletion.unassigned)
                        .await?
                        .into_iter()
                        .map(|t| deletion.event(t.into()))
                        .collect();
                    for channel in crate::channels::load_many(conn, ws, &deletion.channels).await? {
                        events.push(deletion.channel_event(channel));
                    }
                    if !events.is_empty() {
                        outbox::record(conn, ws, OffsetDateTime::now_utc(), &events).await?;
                    }
                    crate::audit::write(conn, &[audit], None).await?;
                    Ok(())
                }
                .scope_boxed()
            })
            .await;
        result.map_err(|e| match e {
            TxError::Refused(e) => e,
            TxError::Db(e) => TeamLookupError::Unknown(repo(e)),
        })
    }
}
