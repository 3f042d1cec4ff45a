//! The conversation reports on PostgreSQL (docs/architecture.md, "Reports"): [`record`] stores
//! what the domain's [`decide`] makes of an event, in the event's transaction; [`PgReports`]
//! aggregates the facts of a period (read from the replica when one is configured).

use std::collections::BTreeMap;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Bool, Nullable, SmallInt, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::business_hours::BusinessHours;
use domain::reports::{
    decide, ConversationEvent, ConversationFacts, ConversationReport, Cycle, DurationFigure, FactKind,
    FirstResponseDurations, GroupBy, GroupKey, ReportGroup, ReportQuery, SlaCounts, ThreadAtEvent,
};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

pub mod backfill;

use crate::assistant::read_only;
use crate::pool::Db;
use crate::schema::{conversation_cycles, conversation_facts, threads};

/// A thread's channel, team, assignee kind and assigned user.
type ThreadColumns = (i64, Option<i64>, Option<String>, Option<i64>);
/// A stored cycle: start, first responses (user, AI agent), the run awaiting a reply.
type CycleColumns = (OffsetDateTime, Option<OffsetDateTime>, Option<OffsetDateTime>, Option<OffsetDateTime>);

/// Stores what `event` adds to the reports of thread `thread_id`, in the caller's transaction
/// (which has the thread row locked or just written).
///
/// # Errors
/// Database errors.
pub async fn record(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    thread_id: i64,
    event: ConversationEvent,
) -> QueryResult<()> {
    let thread: Option<ThreadColumns> = threads::table
        .filter(threads::workspace_id.eq(ws.0))
        .filter(threads::id.eq(thread_id))
        .select((threads::channel_id, threads::team_id, threads::assignee_type, threads::assignee_user_id))
        .first(conn)
        .await
        .optional()?;
    let Some((channel_id, team_id, assignee_type, assignee_user_id)) = thread else { return Ok(()) };
    let at_event = ThreadAtEvent {
        team_id,
        assignee_user_id: assignee_user_id.filter(|_| assignee_type.as_deref() == Some("user")),
    };
    let cycle: Option<CycleColumns> = conversation_cycles::table
        .filter(conversation_cycles::thread_id.eq(thread_id))
        .select((
            conversation_cycles::started_at,
            conversation_cycles::first_response_at,
            conversation_cycles::first_response_ai_at,
            conversation_cycles::awaiting_since,
        ))
        .for_update()
        .first(conn)
        .await
        .optional()?;
    let before = cycle.map(|(started_at, first_response_at, first_response_ai_at, awaiting_since)| Cycle {
        started_at,
        first_response_at,
        first_response_ai_at,
        awaiting_since,
    });
    let hours = crate::business_hours::load(conn, ws).await?;
    let decision = decide(before, at_event, event, &hours);
    if let Some(c) = decision.cycle.filter(|c| Some(*c) != before) {
        let row = (
            conversation_cycles::thread_id.eq(thread_id),
            conversation_cycles::workspace_id.eq(ws.0),
            conversation_cycles::started_at.eq(c.started_at),
            conversation_cycles::first_response_at.eq(c.first_response_at),
            conversation_cycles::first_response_ai_at.eq(c.first_response_ai_at),
            conversation_cycles::awaiting_since.eq(c.awaiting_since),
        );
        diesel::insert_into(conversation_cycles::table)
            .values(row)
            .on_conflict(conversation_cycles::thread_id)
            .do_update()
            .set((
                conversation_cycles::started_at.eq(c.started_at),
                conversation_cycles::first_response_at.eq(c.first_response_at),
                conversation_cycles::first_response_ai_at.eq(c.first_response_ai_at),
                conversation_cycles::awaiting_since.eq(c.awaiting_since),
            ))
            .execute(conn)
            .await?;
    }
    if !decision.facts.is_empty() {
        let rows: Vec<_> = decision
            .facts
            .iter()
            .map(|f| {
                (
                    conversation_facts::workspace_id.eq(ws.0),
                    conversation_facts::thread_id.eq(thread_id),
                    conversation_facts::channel_id.eq(channel_id),
                    conversation_facts::kind.eq(f.kind.code()),
                    conversation_facts::at.eq(f.at),
                    conversation_facts::started_at.eq(f.started_at),
                    conversation_facts::seconds.eq(f.seconds),
                    conversation_facts::business_seconds.eq(f.business_seconds),
                    conversation_facts::user_id.eq(f.user_id),
                    conversation_facts::team_id.eq(f.team_id),
                )
            })
            .collect();
        diesel::insert_into(conversation_facts::table).values(rows).execute(conn).await?;
    }
    Ok(())
}

/// Counts an SLA of thread `thread_id` as met (`hit`) or missed at `at`, in the caller's
/// transaction: the report's `sla.hit` / `sla.missed` of the period holding `at`, for the
/// thread's channel, team, labels and assigned user.
///
/// # Errors
/// Database errors.
pub async fn record_sla_outcome(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    thread_id: i64,
    at: OffsetDateTime,
    hit: bool,
) -> QueryResult<()> {
    record(conn, ws, thread_id, ConversationEvent::SlaOutcome { at, hit }).await
}

/// Recomputes the business seconds of every duration stored for `ws` with `hours` (its hours
/// changed), in the caller's transaction.
///
/// # Errors
/// Database errors.
pub async fn refigure_business_time(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    hours: &BusinessHours,
) -> QueryResult<()> {
    let mut after = 0i64;
    loop {
        let rows: Vec<(i64, Option<OffsetDateTime>, OffsetDateTime)> = conversation_facts::table
            .filter(conversation_facts::workspace_id.eq(ws.0))
            .filter(conversation_facts::started_at.is_not_null())
            .filter(conversation_facts::id.gt(after))
            .order(conversation_facts::id.asc())
            .limit(10_000)
            .select((conversation_facts::id, conversation_facts::started_at, conversation_facts::at))
            .load(conn)
            .await?;
        let Some(last) = rows.last() else { return Ok(()) };
        after = last.0;
        let ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
        let seconds: Vec<i64> =
            rows.iter().map(|(_, from, at)| from.map_or(0, |from| hours.business_seconds(from, *at))).collect();
        diesel::sql_query(
            "UPDATE conversation_facts f SET business_seconds = v.s
             FROM unnest($2::bigint[], $3::bigint[]) AS v (id, s)
             WHERE f.workspace_id = $1 AND f.id = v.id",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<Array<BigInt>, _>(&ids)
        .bind::<Array<BigInt>, _>(&seconds)
        .execute(conn)
        .await?;
    }
}

/// [`ConversationFacts`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgReports {
    db: Db,
}

impl PgReports {
    /// Reports read from `db` (the replica-reading handle when there is a replica).
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct FigureRow {
    #[diesel(sql_type = Nullable<BigInt>)]
    key: Option<i64>,
    #[diesel(sql_type = SmallInt)]
    kind: i16,
    #[diesel(sql_type = BigInt)]
    n: i64,
    #[diesel(sql_type = Nullable<diesel::sql_types::Double>)]
    avg: Option<f64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    median: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    p90: Option<i64>,
}

#[derive(QueryableByName)]
struct DurationRow {
    #[diesel(sql_type = SmallInt)]
    kind: i16,
    #[diesel(sql_type = Nullable<BigInt>)]
    v: Option<i64>,
}

#[derive(QueryableByName)]
struct NameRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::Text)]
    name: String,
}

/// The group key column of `group_by` over the facts `f` (and the labels `tl`).
fn key_sql(group_by: GroupBy) -> (&'static str, &'static str) {
    match group_by {
        GroupBy::None => ("NULL::bigint", ""),
        GroupBy::Agent => ("f.user_id", ""),
        GroupBy::Team => ("f.team_id", ""),
        GroupBy::Channel => ("f.channel_id", ""),
        // A label figure goes to the labels the thread carries now.
        GroupBy::Label => {
            ("tl.label_id", "JOIN thread_labels tl ON tl.thread_id = f.thread_id AND tl.workspace_id = $1")
        }
    }
}

fn names_sql(group_by: GroupBy) -> Option<(&'static str, &'static str)> {
    match group_by {
        GroupBy::None => None,
        GroupBy::Agent => Some(("user", "SELECT id, name FROM users WHERE id = ANY($2) AND $1 = $1")),
        GroupBy::Team => Some(("team", "SELECT id, name FROM teams WHERE workspace_id = $1 AND id = ANY($2)")),
        GroupBy::Label => Some(("label", "SELECT id, name FROM labels WHERE workspace_id = $1 AND id = ANY($2)")),
        GroupBy::Channel => {
            Some(("channel", "SELECT id, display_name AS name FROM channels WHERE workspace_id = $1 AND id = ANY($2)"))
        }
    }
}

#[async_trait]
impl ConversationFacts for PgReports {
    async fn report(&self, ws: WorkspaceId, query: ReportQuery) -> Result<ConversationReport, RepoError> {
        read_only(&self.db, move |c| {
            async move {
                let (key, join) = key_sql(query.group_by);
                let keyed = if query.group_by == GroupBy::None { "" } else { "AND key IS NOT NULL" };
                let sql = format!(
                    "SELECT key, kind, count(*)::bigint AS n, avg(v)::float8 AS avg,
                            percentile_disc(0.5) WITHIN GROUP (ORDER BY v) AS median,
                            percentile_disc(0.9) WITHIN GROUP (ORDER BY v) AS p90
                     FROM (SELECT {key} AS key, f.kind,
                                  CASE WHEN $4 THEN f.business_seconds ELSE f.seconds END AS v
                           FROM conversation_facts f {join}
                           WHERE f.workspace_id = $1 AND f.at >= $2 AND f.at < $3) x
                     WHERE true {keyed}
                     GROUP BY key, kind"
                );
                let rows: Vec<FigureRow> = diesel::sql_query(sql)
                    .bind::<BigInt, _>(ws.0)
                    .bind::<Timestamptz, _>(query.since)
                    .bind::<Timestamptz, _>(query.until)
                    .bind::<Bool, _>(query.business_hours)
                    .load(c)
                    .await?;
                let mut groups: BTreeMap<Option<i64>, ReportGroup> = BTreeMap::new();
                if query.group_by == GroupBy::None {
                    groups.insert(None, ReportGroup::empty(None));
                }
                for r in rows {
                    let g = groups.entry(r.key).or_insert_with(|| ReportGroup::empty(None));
                    let figure = DurationFigure { count: r.n, avg: r.avg, median: r.median, p90: r.p90 };
                    match FactKind::from_code(r.kind) {
                        Some(FactKind::Conversation) => g.conversations = r.n,
                        Some(FactKind::Incoming) => g.incoming_messages = r.n,
                        Some(FactKind::Outgoing) => g.outgoing_messages = r.n,
                        Some(FactKind::FirstResponse) => g.first_response = figure,
                        Some(FactKind::FirstResponseAi) => g.first_response_ai = figure,
                        Some(FactKind::Reply) => g.reply = figure,
                        Some(FactKind::Resolution) => {
                            g.resolutions = r.n;
                            g.resolution = figure;
                        }
                        Some(FactKind::SlaHit) => g.sla = SlaCounts { hit: r.n, ..g.sla },
                        Some(FactKind::SlaMissed) => g.sla = SlaCounts { missed: r.n, ..g.sla },
                        None => {}
                    }
                }
                if let Some((kind, sql)) = names_sql(query.group_by) {
                    let ids: Vec<i64> = groups.keys().filter_map(|k| *k).collect();
                    let names: Vec<NameRow> =
                        diesel::sql_query(sql).bind::<BigInt, _>(ws.0).bind::<Array<BigInt>, _>(&ids).load(c).await?;
                    let names: BTreeMap<i64, String> = names.into_iter().map(|n| (n.id, n.name)).collect();
                    for (id, g) in &mut groups {
                        if let Some(id) = id {
                            let name = names.get(id).cloned().unwrap_or_default();
                            g.key = Some(GroupKey { kind, id: *id, name });
                        }
                    }
                }
                Ok(ConversationReport {
                    since: query.since,
                    until: query.until,
                    business_hours: query.business_hours,
                    groups: groups.into_values().collect(),
                })
            }
            .scope_boxed()
        })
        .await
    }

    async fn first_response_durations(
        &self,
        ws: WorkspaceId,
        query: ReportQuery,
    ) -> Result<FirstResponseDurations, RepoError> {
        read_only(&self.db, move |c| {
            async move {
                let rows: Vec<DurationRow> = diesel::sql_query(
                    "SELECT f.kind, CASE WHEN $4 THEN f.business_seconds ELSE f.seconds END AS v
                     FROM conversation_facts f
                     WHERE f.workspace_id = $1 AND f.at >= $2 AND f.at < $3 AND f.kind = ANY($5)",
                )
                .bind::<BigInt, _>(ws.0)
                .bind::<Timestamptz, _>(query.since)
                .bind::<Timestamptz, _>(query.until)
                .bind::<Bool, _>(query.business_hours)
                .bind::<Array<SmallInt>, _>(vec![FactKind::FirstResponse.code(), FactKind::FirstResponseAi.code()])
                .load(c)
                .await?;
                let mut out = FirstResponseDurations::default();
                for r in rows {
                    match (FactKind::from_code(r.kind), r.v) {
                        (Some(FactKind::FirstResponse), Some(v)) => out.human.push(v),
                        (Some(FactKind::FirstResponseAi), Some(v)) => out.ai.push(v),
                        _ => {}
                    }
                }
                Ok(out)
            }
            .scope_boxed()
        })
        .await
    }
}
