//! Automatic assignment and the lifecycle's timers: the facts the domain's decisions
//! (`domain::teams::assignment`, `domain::threads::lifecycle`) need, read inside the transaction
//! that writes what they decide, with the events.
//!
//! Exactness under concurrency: every decision over a team runs with the team's row locked
//! (`FOR NO KEY UPDATE`, which the foreign-key checks of threads naming the team do not wait for)
//! and its members' membership rows locked in user id order, so two decisions that could give a
//! thread to the same member (the same team, or two teams sharing the member) take turns, and the
//! second counts the first one's threads. Nothing is held between transactions: a team's queue is
//! its threads with `waiting_since` set, served by whichever instance gets to it first.

use std::collections::HashMap;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::members::Availability;
use domain::teams::{
    assign_waiting, assignments_to_announce, decide_reopen_capacity, place_new_thread, Assignment, AssignmentMode,
    AssignmentPolicy, AssignmentReason, Candidate, DefaultTeam, ReopenFacts, TeamFacts, WAITING_BATCH,
};
use domain::threads::{decide_snooze_expiry, LifecycleTimers, StatusFacts, ThreadStatus};
use domain::webhooks::DomainEvent;
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;
use crate::prepared::Prepared;
use crate::threads::{apply_status, load_many};
use crate::webhooks::outbox;

/// `status IN (…)` of the statuses that count toward a member's load, as the domain defines
/// them; written out (not bound) so PostgreSQL matches the partial indexes built on it.
fn load_statuses() -> String {
    let names: Vec<String> =
        ThreadStatus::ALL.into_iter().filter(|s| s.counts_as_load()).map(|s| format!("'{}'", s.as_str())).collect();
    format!("status IN ({})", names.join(", "))
}

#[derive(QueryableByName)]
struct PolicyRow {
    #[diesel(sql_type = BigInt)]
    team_id: i64,
    #[diesel(sql_type = Text)]
    mode: String,
    #[diesel(sql_type = Nullable<diesel::sql_types::Integer>)]
    capacity: Option<i32>,
}

impl PolicyRow {
    fn policy(&self) -> AssignmentPolicy {
        AssignmentPolicy {
            mode: AssignmentMode::parse(&self.mode).unwrap_or(AssignmentMode::Manual),
            capacity: self.capacity,
        }
    }
}

#[derive(QueryableByName)]
struct MemberRow {
    #[diesel(sql_type = BigInt)]
    user_id: i64,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    is_active: bool,
    #[diesel(sql_type = Text)]
    availability: String,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    last_assigned_at: Option<OffsetDateTime>,
}

#[derive(QueryableByName)]
struct LoadRow {
    #[diesel(sql_type = BigInt)]
    user_id: i64,
    #[diesel(sql_type = BigInt)]
    load: i64,
}

#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// Locks the team's row and reads its policy; `None` when it is gone (or, with `skip_locked`,
/// being served by another transaction right now).
async fn lock_team(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    team_id: i64,
    skip_locked: bool,
) -> QueryResult<Option<AssignmentPolicy>> {
    let skip = if skip_locked { " SKIP LOCKED" } else { "" };
    let row: Option<PolicyRow> = Prepared(
        diesel::sql_query(format!(
            "SELECT id AS team_id, assignment_mode AS mode, assignment_capacity AS capacity
         FROM teams WHERE workspace_id = $1 AND id = $2 FOR NO KEY UPDATE{skip}"
        ))
        .bind::<BigInt, _>(ws.0)
        .bind::<BigInt, _>(team_id),
    )
    .get_result(conn)
    .await
    .optional()?;
    Ok(row.map(|r| r.policy()))
}

/// The team's facts, its row locked by the caller: members (their membership rows locked in id
/// order), their loads, and up to [`WAITING_BATCH`] waiting threads, oldest first (locked, skipping
/// any another transaction is changing now: it is served on a later pass).
async fn team_facts(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    team_id: i64,
    policy: AssignmentPolicy,
) -> QueryResult<TeamFacts> {
    let members: Vec<MemberRow> = Prepared(
        diesel::sql_query(
            "SELECT tm.user_id, wm.is_active, wm.availability, tm.last_assigned_at
         FROM team_members tm
         JOIN workspace_members wm ON wm.workspace_id = tm.workspace_id AND wm.user_id = tm.user_id
         WHERE tm.workspace_id = $1 AND tm.team_id = $2
         ORDER BY tm.user_id
         FOR NO KEY UPDATE OF wm",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<BigInt, _>(team_id),
    )
    .load(conn)
    .await?;
    let ids: Vec<i64> = members.iter().map(|m| m.user_id).collect();
    let loads: HashMap<i64, i64> = if ids.is_empty() {
        HashMap::new()
    } else {
        Prepared(
            diesel::sql_query(format!(
                "SELECT assignee_user_id AS user_id, count(*) AS load FROM threads
             WHERE workspace_id = $1 AND assignee_user_id = ANY ($2) AND {}
             GROUP BY assignee_user_id",
                load_statuses()
            ))
            .bind::<BigInt, _>(ws.0)
            .bind::<Array<BigInt>, _>(&ids),
        )
        .load::<LoadRow>(conn)
        .await?
        .into_iter()
        .map(|r| (r.user_id, r.load))
        .collect()
    };
    let waiting: Vec<IdRow> = Prepared(
        diesel::sql_query(format!(
            "SELECT id FROM threads
         WHERE team_id = $2 AND waiting_since IS NOT NULL AND workspace_id = $1 AND {}
         ORDER BY waiting_since, id LIMIT $3
         FOR UPDATE SKIP LOCKED",
            load_statuses()
        ))
        .bind::<BigInt, _>(ws.0)
        .bind::<BigInt, _>(team_id)
        .bind::<BigInt, _>(WAITING_BATCH),
    )
    .load(conn)
    .await?;
    Ok(TeamFacts {
        policy,
        members: members
            .into_iter()
            .map(|m| Candidate {
                user_id: m.user_id,
                active: m.is_active,
                availability: Availability::stored(&m.availability),
                load: loads.get(&m.user_id).copied().unwrap_or(0),
                last_assigned_at: m.last_assigned_at,
            })
            .collect(),
        waiting: waiting.into_iter().map(|r| r.id).collect(),
    })
}

/// Writes the assignments the domain decided, and records `thread.assigned` for those it announces
/// ([`assignments_to_announce`]: not the threads `created` in this transaction, whose
/// `thread.created`, recorded by the caller afterwards, carries the assignee).
async fn apply_assignments(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    team_id: i64,
    assignments: &[Assignment],
    created: &[i64],
) -> QueryResult<()> {
    if assignments.is_empty() {
        return Ok(());
    }
    let threads: Vec<i64> = assignments.iter().map(|a| a.thread_id).collect();
    let users: Vec<i64> = assignments.iter().map(|a| a.user_id).collect();
    let reasons: Vec<&str> = assignments.iter().map(|a| a.reason.as_str()).collect();
    let ats: Vec<OffsetDateTime> = assignments.iter().map(|a| a.at).collect();
    // Each member's latest turn of this decision.
    let mut turns: HashMap<i64, OffsetDateTime> = HashMap::new();
    for a in assignments {
        let t = turns.entry(a.user_id).or_insert(a.at);
        *t = (*t).max(a.at);
    }
    let (turn_users, turn_ats): (Vec<i64>, Vec<OffsetDateTime>) = turns.into_iter().unzip();
    // The threads and the members' turns in one statement (one round trip).
    Prepared(
        diesel::sql_query(
            "WITH assigned AS (
                 UPDATE threads t SET assignee_type = 'user', assignee_user_id = v.user_id, assignee_team_id = NULL,
                        assignee_ai_agent_id = NULL, assigned_at = v.at, assignment_reason = v.reason,
                        waiting_since = NULL, updated_at = now()
                 FROM unnest($3::bigint[], $4::bigint[], $5::text[], $6::timestamptz[]) AS v (id, user_id, reason, at)
                 WHERE t.workspace_id = $1 AND t.id = v.id
             )
             UPDATE team_members tm SET last_assigned_at = v.at
             FROM unnest($7::bigint[], $8::timestamptz[]) AS v (user_id, at)
             WHERE tm.workspace_id = $1 AND tm.team_id = $2 AND tm.user_id = v.user_id",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<BigInt, _>(team_id)
        .bind::<Array<BigInt>, _>(&threads)
        .bind::<Array<BigInt>, _>(&users)
        .bind::<Array<Text>, _>(&reasons)
        .bind::<Array<Timestamptz>, _>(&ats)
        .bind::<Array<BigInt>, _>(&turn_users)
        .bind::<Array<Timestamptz>, _>(&turn_ats),
    )
    .execute(conn)
    .await?;
    let announced = assignments_to_announce(assignments, created);
    if !announced.is_empty() {
        let ids: Vec<i64> = announced.iter().map(|a| a.thread_id).collect();
        let events: Vec<DomainEvent> = load_many(conn, ws, &ids)
            .await?
            .into_iter()
            .filter_map(|t| announced.iter().find(|a| a.thread_id == t.id).map(|a| a.event(t.into())))
            .collect();
        outbox::record(conn, ws, OffsetDateTime::now_utc(), &events).await?;
    }
    Ok(())
}

/// Serves the team's queue, its row locked by the caller; returns how many threads were given.
async fn serve_locked(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    team_id: i64,
    policy: AssignmentPolicy,
    now: OffsetDateTime,
    created: &[i64],
) -> QueryResult<usize> {
    // Nothing to load for a team whose queue waits for people (the domain's rule).
    if !policy.serves_queue() {
        return Ok(0);
    }
    let facts = team_facts(conn, ws, team_id, policy).await?;
    let assignments = assign_waiting(&facts, now);
    apply_assignments(conn, ws, team_id, &assignments, created).await?;
    Ok(assignments.len())
}

/// A thread just inserted on `channel_id` in this transaction: with the channel's default team
/// it goes to the team and, unless the team assigns by hand, joins its queue, which is served at
/// once. Call before recording its `thread.created`, which then carries where it went.
pub async fn place_new_threads(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    channel_id: i64,
    thread_ids: &[i64],
    now: OffsetDateTime,
) -> QueryResult<bool> {
    // The channel's team, its row locked at once (the mode read is the one the decision uses).
    let team: Option<PolicyRow> = Prepared(
        diesel::sql_query(
            "SELECT t.id AS team_id, t.assignment_mode AS mode, t.assignment_capacity AS capacity
         FROM channels c JOIN teams t ON t.workspace_id = c.workspace_id AND t.id = c.default_team_id
         WHERE c.workspace_id = $1 AND c.id = $2
         FOR NO KEY UPDATE OF t",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<BigInt, _>(channel_id),
    )
    .get_result(conn)
    .await
    .optional()?;
    let default_team = team.as_ref().map(|t| DefaultTeam { team_id: t.team_id, mode: t.policy().mode });
    let Some(placement) = place_new_thread(default_team) else { return Ok(false) };
    Prepared(
        diesel::sql_query(
            "UPDATE threads SET team_id = $2, assignee_type = 'team', assignee_team_id = $2, waiting_since = $4
         WHERE workspace_id = $1 AND id = ANY ($3)",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<BigInt, _>(placement.team_id)
        .bind::<Array<BigInt>, _>(thread_ids)
        .bind::<Timestamptz, _>(now),
    )
    .execute(conn)
    .await?;
    if placement.served_at_once {
        let policy = team.map(|t| t.policy()).unwrap_or_default();
        serve_locked(conn, ws, placement.team_id, policy, now, thread_ids).await?;
    }
    Ok(true)
}

#[derive(QueryableByName)]
struct HolderRow {
    #[diesel(sql_type = Nullable<Text>)]
    assignee_type: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    assignee_user_id: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    team_id: Option<i64>,
}

/// A thread this transaction just made `open` from `snoozed` or `resolved` (its row locked by
/// that change): the facts of [`decide_reopen_capacity`] (its team's row locked, then the team's
/// members' rows in id order, as every assignment decision takes them), and, when its member is
/// at the capacity, the thread goes back to its team's queue, which is served at once. Records
/// `thread.assigned` once, with where the thread ended up.
pub async fn check_reopened(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    thread_id: i64,
    now: OffsetDateTime,
) -> QueryResult<()> {
    let row: HolderRow = Prepared(
        diesel::sql_query(
            "SELECT assignee_type, assignee_user_id, team_id FROM threads WHERE workspace_id = $1 AND id = $2",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<BigInt, _>(thread_id),
    )
    .get_result(conn)
    .await?;
    let holder = row.assignee_user_id.filter(|_| row.assignee_type.as_deref() == Some("user"));
    // Without a team or a member holding the thread there is nothing to count.
    let (Some(team_id), Some(user_id)) = (row.team_id, holder) else { return Ok(()) };
    let Some(policy) = lock_team(conn, ws, team_id, false).await? else { return Ok(()) };
    let facts = team_facts(conn, ws, team_id, policy).await?;
    // The member's load counts this thread already (it is open in this transaction).
    let others = facts.members.iter().find(|m| m.user_id == user_id).map_or(0, |m| (m.load - 1).max(0));
    let reopened = ReopenFacts { holder, team: Some((team_id, policy)), holder_load: others };
    let Some(back) = decide_reopen_capacity(reopened) else { return Ok(()) };
    Prepared(
        diesel::sql_query(
            "UPDATE threads SET assignee_type = 'team', assignee_team_id = $3, assignee_user_id = NULL,
                    waiting_since = $4, assigned_at = $4, assignment_reason = coalesce($5, assignment_reason),
                    updated_at = now()
             WHERE workspace_id = $1 AND id = $2",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<BigInt, _>(thread_id)
        .bind::<BigInt, _>(back.team_id)
        .bind::<Timestamptz, _>(now)
        .bind::<Nullable<Text>, _>(back.reason().map(AssignmentReason::as_str)),
    )
    .execute(conn)
    .await?;
    // Served like a new thread: its own event is recorded below, once, with the outcome.
    serve_locked(conn, ws, back.team_id, back.policy, now, &[thread_id]).await?;
    let events: Vec<DomainEvent> =
        load_many(conn, ws, &[thread_id]).await?.into_iter().map(|t| back.event(t.into())).collect();
    outbox::record(conn, ws, now, &events).await
}

/// [`LifecycleTimers`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgLifecycleTimers {
    db: Db,
}

impl PgLifecycleTimers {
    /// The timers on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct DueRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    workspace_id: i64,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    snoozed_until: Option<OffsetDateTime>,
}

#[derive(QueryableByName)]
struct QueueRow {
    #[diesel(sql_type = BigInt)]
    workspace_id: i64,
    #[diesel(sql_type = BigInt)]
    team_id: i64,
}

/// The snooze timer's claim: due timed snoozes in due order, by the partial index
/// `threads_snooze_due_idx` (never a scan of the threads), rows another instance holds skipped.
pub const SNOOZE_DUE_SQL: &str = "SELECT id, workspace_id, status, snoozed_until FROM threads
     WHERE status = 'snoozed' AND snoozed_until IS NOT NULL AND snoozed_until <= $1
     ORDER BY snoozed_until LIMIT $2
     FOR UPDATE SKIP LOCKED";

#[async_trait]
impl LifecycleTimers for PgLifecycleTimers {
    async fn expire_snoozes(&self, now: OffsetDateTime, limit: i64) -> Result<usize, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let mut opened = 0;
        // One thread a transaction: reopening a thread may hand it on, which locks its team and
        // then the team's members, as every other assignment path does for one team. A batch
        // holding several teams' locks at once deadlocked with a send on another of those teams.
        for _ in 0..limit {
            let step = conn
                .transaction::<Option<bool>, diesel::result::Error, _>(|conn| {
                    async move {
                        let due: Vec<DueRow> = Prepared(
                            diesel::sql_query(SNOOZE_DUE_SQL).bind::<Timestamptz, _>(now).bind::<BigInt, _>(1),
                        )
                        .load(conn)
                        .await?;
                        let Some(row) = due.into_iter().next() else { return Ok(None) };
                        let facts =
                            StatusFacts { status: ThreadStatus::stored(&row.status), snoozed_until: row.snoozed_until };
                        let Some(change) = decide_snooze_expiry(facts, now) else { return Ok(Some(false)) };
                        let ws = WorkspaceId(row.workspace_id);
                        apply_status(conn, ws, row.id, &change).await?;
                        let breaches =
                            crate::sla::tracking::on_status(conn, ws, row.id, facts.status, change.status).await?;
                        let thread = load_many(conn, ws, &[row.id]).await?;
                        let events: Vec<DomainEvent> = thread.into_iter().map(|t| change.event(t.into())).collect();
                        outbox::record(conn, ws, OffsetDateTime::now_utc(), &events).await?;
                        // Back to `open`, it counts toward its member's load again.
                        check_reopened(conn, ws, row.id, now).await?;
                        crate::sla::tracking::announce(conn, ws, breaches).await?;
                        Ok(Some(true))
                    }
                    .scope_boxed()
                })
                .await
                .map_err(repo)?;
            match step {
                None => break,
                Some(true) => {
                    opened += 1;
                    self.db.wake().events_committed();
                }
                Some(false) => {}
            }
        }
        Ok(opened)
    }

    async fn serve_waiting(&self, now: OffsetDateTime) -> Result<usize, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let queues: Vec<QueueRow> = Prepared(
            diesel::sql_query(format!(
                "SELECT DISTINCT th.workspace_id, th.team_id FROM threads th
             JOIN teams t ON t.workspace_id = th.workspace_id AND t.id = th.team_id
             WHERE th.waiting_since IS NOT NULL AND th.team_id IS NOT NULL AND th.{}
               AND t.assignment_mode = ANY ($1)",
                load_statuses()
            ))
            .bind::<Array<Text>, _>(AssignmentMode::serving()),
        )
        .load(&mut conn)
        .await
        .map_err(repo)?;
        let mut given = 0;
        for q in queues {
            let ws = WorkspaceId(q.workspace_id);
            let team_id = q.team_id;
            given += conn
                .transaction::<usize, diesel::result::Error, _>(|conn| {
                    async move {
                        // A team another instance is serving (or assigning a new thread of) right
                        // now is skipped: that transaction sees the same queue.
                        let Some(policy) = lock_team(conn, ws, team_id, true).await? else { return Ok(0) };
                        serve_locked(conn, ws, team_id, policy, now, &[]).await
                    }
                    .scope_boxed()
                })
                .await
                .map_err(repo)?;
        }
        if given > 0 {
            self.db.wake().events_committed();
        }
        Ok(given)
    }
}
