//! The conversation reports on PostgreSQL (docs/architecture.md, "Reports"): [`record`] stores
//! what the domain's [`decide`] makes of an event, in the event's transaction (a trigger of
//! migration `2026-11-30-000101_conversation_rollups` queues the new facts in
//! `conversation_facts_pending`; [`rollup::fold`] folds them into `conversation_rollups` after
//! commit); [`PgReports`] reads a period from the rollup's blocks, the facts not folded yet, its
//! partial days and the facts of the buckets holding the percentiles (read from the replica when
//! one is configured).

use std::collections::BTreeMap;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Bool, Nullable, SmallInt, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::business_hours::BusinessHours;
use domain::reports::{
    decide, locate_rank, nearest_rank, plan_period, value_at_rank, ConversationEvent, ConversationFacts,
    ConversationReport, Cycle, DurationFigure, FactKind, FirstResponseDurations, GroupBy, GroupKey, ReportGroup,
    ReportQuery, SlaCounts, ThreadAtEvent,
};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::{Date, OffsetDateTime};

pub mod backfill;
pub mod rollup;

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

/// How many durations one refiguring batch recomputes.
pub const REFIGURE_BATCH: i64 = 10_000;

/// Recomputes with `hours` the business seconds of up to `limit` durations stored for `ws` with an
/// id above `after` and at most `up_to`, in id order, in the caller's transaction; the last id
/// recomputed (`None`: none was left).
///
/// # Errors
/// Database errors.
pub async fn refigure_batch(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    hours: &BusinessHours,
    after: i64,
    up_to: i64,
    limit: i64,
) -> QueryResult<Option<i64>> {
    let rows: Vec<(i64, Option<OffsetDateTime>, OffsetDateTime)> = conversation_facts::table
        .filter(conversation_facts::workspace_id.eq(ws.0))
        .filter(conversation_facts::started_at.is_not_null())
        .filter(conversation_facts::id.gt(after))
        .filter(conversation_facts::id.le(up_to))
        .order(conversation_facts::id.asc())
        .limit(limit)
        .select((conversation_facts::id, conversation_facts::started_at, conversation_facts::at))
        .load(conn)
        .await?;
    let Some(last) = rows.last().map(|r| r.0) else { return Ok(None) };
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
    Ok(Some(last))
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

/// A row of the period's histograms: a rollup block's count, total and histogram (`counts`), or the
/// count of one bucket of a partial day's facts (`bucket`; -1 for facts without a duration); with
/// the average of its key and kind (`avg` of PostgreSQL: the numeric quotient of the exact sum).
#[derive(QueryableByName)]
struct HistogramRow {
    #[diesel(sql_type = BigInt)]
    key: i64,
    #[diesel(sql_type = SmallInt)]
    kind: i16,
    #[diesel(sql_type = BigInt)]
    n: i64,
    #[diesel(sql_type = Nullable<Array<diesel::sql_types::Integer>>)]
    counts: Option<Vec<i32>>,
    #[diesel(sql_type = Nullable<SmallInt>)]
    bucket: Option<i16>,
    #[diesel(sql_type = Nullable<diesel::sql_types::Double>)]
    avg: Option<f64>,
}

/// A key's and kind's figures over the period: count, average and histogram by bucket.
#[derive(Default)]
struct Histogram {
    n: i64,
    avg: Option<f64>,
    counts: Vec<i64>,
}

impl Histogram {
    fn add(&mut self, bucket: usize, n: i64) {
        if self.counts.len() <= bucket {
            self.counts.resize(bucket + 1, 0);
        }
        self.counts[bucket] += n;
    }

    /// The non-empty buckets in ascending order, with their counts.
    fn buckets(&self) -> Vec<(i16, i64)> {
        self.counts.iter().enumerate().filter(|(_, n)| **n != 0).map(|(b, n)| (b as i16, *n)).collect()
    }
}

/// A fact of a bucket that holds a wanted rank: its group key and value.
#[derive(QueryableByName)]
struct BucketFactRow {
    #[diesel(sql_type = SmallInt)]
    kind: i16,
    #[diesel(sql_type = SmallInt)]
    bucket: i16,
    #[diesel(sql_type = BigInt)]
    key: i64,
    #[diesel(sql_type = BigInt)]
    v: i64,
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

/// The rollup's grouping (`conversation_rollups.dim`) of `group_by`, and its key over the facts `f`
/// (and the labels `tl`): 0 for the whole workspace.
fn key_sql(group_by: GroupBy) -> (i16, &'static str, &'static str) {
    match group_by {
        GroupBy::None => (0, "0::bigint", ""),
        GroupBy::Agent => (1, "f.user_id", ""),
        GroupBy::Team => (2, "f.team_id", ""),
        GroupBy::Channel => (3, "f.channel_id", ""),
        // A label figure goes to the labels the thread carries now: each fact's from the index of
        // its thread (a join lets the planner hash every label of every workspace instead).
        GroupBy::Label => (
            4,
            "tl.label_id",
            "CROSS JOIN LATERAL unnest(ARRAY(SELECT l.label_id FROM thread_labels l WHERE l.thread_id = f.thread_id))
                 AS tl (label_id)",
        ),
    }
}

fn names_sql(group_by: GroupBy) -> Option<(&'static str, &'static str)> {
    match group_by {
        GroupBy::None => None,
        // The member's name in this workspace, or the account's (as `GET /v1/users` shows it).
        GroupBy::Agent => Some((
            "user",
            "SELECT u.id, coalesce(m.name, u.name) AS name FROM users u
             LEFT JOIN workspace_members m ON m.workspace_id = $1 AND m.user_id = u.id
             WHERE u.id = ANY($2)",
        )),
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
                let (dim, key, join) = key_sql(query.group_by);
                let keyed =
                    if query.group_by == GroupBy::None { String::new() } else { format!("AND {key} IS NOT NULL") };
                let (v, measure) =
                    if query.business_hours { ("f.business_seconds", 1i16) } else { ("f.seconds", 0i16) };
                let plan = plan_period(query.since, query.until);
                let levels: Vec<i16> = plan.blocks.iter().map(|b| b.level).collect();
                let starts: Vec<Date> = plan.blocks.iter().map(|b| b.start).collect();
                // The partial days (at most two; an absent one is empty), and the whole days whose
                // facts are not folded into the blocks yet (`conversation_facts_pending`, normally
                // a handful: the rollup worker folds them within a second or so of their commit).
                let span = |i: usize| plan.spans.get(i).copied().unwrap_or((query.since, query.since));
                let whole = plan.whole_days().unwrap_or((query.since, query.since));
                let facts_sql = |facts: &str, from: u8, to: u8| {
                    format!(
                        "SELECT {key}, f.kind, count(*)::bigint, coalesce(sum({v}), 0)::bigint, NULL::integer[],
                                coalesce(conversation_bucket({v}), -1::smallint)
                         FROM {facts} {join}
                         WHERE f.workspace_id = $1 AND f.at >= ${from} AND f.at < ${to} {keyed}
                         GROUP BY 1, 2, 6"
                    )
                };
                let (span_a, span_b) =
                    (facts_sql("conversation_facts f", 4, 5), facts_sql("conversation_facts f", 8, 9));
                let pending =
                    facts_sql("conversation_facts_pending p JOIN conversation_facts f ON f.id = p.fact_id", 10, 11);
                // In one snapshot each fact is either folded into the blocks or still pending.
                let sql = format!(
                    "SELECT key, kind, n, counts, bucket,
                            (sum(total) OVER k::numeric / nullif(sum(n) OVER k, 0))::float8 AS avg
                     FROM (SELECT r.key, r.kind, r.n, r.total, r.counts, NULL::smallint AS bucket
                           FROM unnest($2::smallint[], $3::date[]) b (level, block)
                           JOIN conversation_rollups r ON r.workspace_id = $1 AND r.measure = $6 AND r.dim = $7
                                                      AND r.level = b.level AND r.block = b.block
                           UNION ALL
                           {span_a}
                           UNION ALL
                           {span_b}
                           UNION ALL
                           {pending}) x (key, kind, n, total, counts, bucket)
                     WINDOW k AS (PARTITION BY key, kind)"
                );
                let rows: Vec<HistogramRow> = diesel::sql_query(sql)
                    .bind::<BigInt, _>(ws.0)
                    .bind::<Array<SmallInt>, _>(&levels)
                    .bind::<Array<diesel::sql_types::Date>, _>(&starts)
                    .bind::<Timestamptz, _>(span(0).0)
                    .bind::<Timestamptz, _>(span(0).1)
                    .bind::<SmallInt, _>(measure)
                    .bind::<SmallInt, _>(dim)
                    .bind::<Timestamptz, _>(span(1).0)
                    .bind::<Timestamptz, _>(span(1).1)
                    .bind::<Timestamptz, _>(whole.0)
                    .bind::<Timestamptz, _>(whole.1)
                    .load(c)
                    .await?;
                let mut histograms: BTreeMap<(i64, i16), Histogram> = BTreeMap::new();
                for r in rows {
                    let h = histograms.entry((r.key, r.kind)).or_default();
                    h.n += r.n;
                    h.avg = r.avg;
                    for (b, n) in r.counts.iter().flatten().enumerate() {
                        h.add(b, i64::from(*n));
                    }
                    if let Some(b) = r.bucket.and_then(|b| usize::try_from(b).ok()) {
                        h.add(b, r.n);
                    }
                }
                histograms.retain(|_, h| h.n != 0);
                let buckets: BTreeMap<(i64, i16), Vec<(i16, i64)>> =
                    histograms.iter().map(|(k, h)| (*k, h.buckets())).collect();
                // Each percentile's bucket and its rank in it; then those buckets' facts, read once
                // per kind and bucket, give the values.
                let mut wanted: Vec<(i64, i16, i16, i64)> = Vec::new();
                for ((key, kind), h) in &histograms {
                    for p in [0.5, 0.9] {
                        if let Some((bucket, pos)) = locate_rank(&buckets[&(*key, *kind)], nearest_rank(p, h.n)) {
                            wanted.push((*key, *kind, bucket, pos));
                        }
                    }
                }
                wanted.sort_unstable();
                wanted.dedup();
                let mut values: BTreeMap<(i64, i16, i16, i64), i64> = BTreeMap::new();
                if !wanted.is_empty() {
                    // Each needed bucket's facts of the period are read once, only for the groups
                    // whose rank lies in it; each group's value at its rank is picked here (as
                    // fast as ranking them in SQL, which sorts them all).
                    let sql = if query.group_by == GroupBy::Label {
                        // A label's own facts of the bucket: the folded ones from their copy per
                        // label, the pending ones (a handful) through the thread's labels.
                        let lv = v.replacen("f.", "lf.", 1);
                        format!(
                            "WITH w AS (SELECT DISTINCT * FROM unnest($2::bigint[], $3::smallint[], $4::smallint[])
                                        w (key, kind, bucket))
                             SELECT w.kind, w.bucket, w.key, {lv} AS v
                             FROM w JOIN conversation_label_facts lf
                                  ON lf.workspace_id = $1 AND lf.label_id = w.key AND lf.kind = w.kind
                                 AND conversation_bucket({lv}) = w.bucket AND {lv} IS NOT NULL
                                 AND lf.at >= $5 AND lf.at < $6
                             UNION ALL
                             SELECT w.kind, w.bucket, w.key, {v}
                             FROM conversation_facts_pending p
                             JOIN conversation_facts f ON f.id = p.fact_id
                             JOIN thread_labels tl ON tl.thread_id = f.thread_id
                             JOIN w ON w.key = tl.label_id AND w.kind = f.kind AND w.bucket = conversation_bucket({v})
                             WHERE f.workspace_id = $1 AND f.at >= $5 AND f.at < $6 AND {v} IS NOT NULL"
                        )
                    } else {
                        // Materialized: each bucket is read once for all its groups (joined to
                        // the wanted groups first, the planner rescans it once per group).
                        format!(
                            "WITH w AS (SELECT DISTINCT * FROM unnest($2::bigint[], $3::smallint[], $4::smallint[])
                                        w (key, kind, bucket)),
                                  b AS MATERIALIZED (
                                      SELECT p.kind, p.bucket, {key} AS key, {v} AS v
                                      FROM (SELECT DISTINCT kind, bucket FROM w) p
                                      JOIN conversation_facts f ON f.workspace_id = $1 AND f.kind = p.kind
                                           AND conversation_bucket({v}) = p.bucket AND {v} IS NOT NULL
                                           AND f.at >= $5 AND f.at < $6
                                      WHERE true {keyed})
                             SELECT b.kind, b.bucket, b.key, b.v FROM b JOIN w USING (kind, bucket, key)"
                        )
                    };
                    let facts: Vec<BucketFactRow> = diesel::sql_query(sql)
                        .bind::<BigInt, _>(ws.0)
                        .bind::<Array<BigInt>, _>(wanted.iter().map(|w| w.0).collect::<Vec<_>>())
                        .bind::<Array<SmallInt>, _>(wanted.iter().map(|w| w.1).collect::<Vec<_>>())
                        .bind::<Array<SmallInt>, _>(wanted.iter().map(|w| w.2).collect::<Vec<_>>())
                        .bind::<Timestamptz, _>(query.since)
                        .bind::<Timestamptz, _>(query.until)
                        .load(c)
                        .await?;
                    let mut in_bucket: BTreeMap<(i64, i16, i16), Vec<i64>> = BTreeMap::new();
                    for f in facts {
                        in_bucket.entry((f.key, f.kind, f.bucket)).or_default().push(f.v);
                    }
                    for &(key, kind, bucket, pos) in &wanted {
                        if let Some(v) = in_bucket.get_mut(&(key, kind, bucket)).and_then(|vs| value_at_rank(vs, pos)) {
                            values.insert((key, kind, bucket, pos), v);
                        }
                    }
                }
                let value_at = |key: i64, kind: i16, n: i64, p: f64| {
                    locate_rank(&buckets[&(key, kind)], nearest_rank(p, n))
                        .and_then(|(b, pos)| values.get(&(key, kind, b, pos)).copied())
                };
                let mut groups: BTreeMap<Option<i64>, ReportGroup> = BTreeMap::new();
                if query.group_by == GroupBy::None {
                    groups.insert(None, ReportGroup::empty(None));
                }
                for (&(key, kind), h) in &histograms {
                    let group_key = (query.group_by != GroupBy::None).then_some(key);
                    let g = groups.entry(group_key).or_insert_with(|| ReportGroup::empty(None));
                    let figure = DurationFigure {
                        count: h.n,
                        avg: h.avg,
                        median: value_at(key, kind, h.n, 0.5),
                        p90: value_at(key, kind, h.n, 0.9),
                    };
                    match FactKind::from_code(kind) {
                        Some(FactKind::Conversation) => g.conversations = h.n,
                        Some(FactKind::Incoming) => g.incoming_messages = h.n,
                        Some(FactKind::Outgoing) => g.outgoing_messages = h.n,
                        Some(FactKind::FirstResponse) => g.first_response = figure,
                        Some(FactKind::FirstResponseAi) => g.first_response_ai = figure,
                        Some(FactKind::Reply) => g.reply = figure,
                        Some(FactKind::Resolution) => {
                            g.resolutions = h.n;
                            g.resolution = figure;
                        }
                        Some(FactKind::SlaHit) => g.sla = SlaCounts { hit: h.n, ..g.sla },
                        Some(FactKind::SlaMissed) => g.sla = SlaCounts { missed: h.n, ..g.sla },
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

    /// Every first response of the period, read from the index that holds only first responses
    /// (`conversation_facts_first_responses`, migration `2026-11-30-000302_first_response_index`).
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
