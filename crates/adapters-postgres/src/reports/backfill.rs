//! The reports of threads whose messages were stored without figures (before the reports
//! existed): each thread noted in `conversation_backfill` is loaded
//! with its messages and recorded status changes, replayed by the domain's [`replay`] (the very
//! decision the live path takes, event by event) and its facts and cycle stored; then its row
//! goes, in the same transaction, so a thread is replayed once.
//!
//! Batches are claimed with `FOR UPDATE SKIP LOCKED`, so instances share the work and a crash
//! leaves the rest for the next run. What the live path records meanwhile is never replayed: a
//! thread's row bounds its history by message id and by the time it was noted, and a thread that
//! already has live facts is replayed only up to its first live fact. The one approximation: a
//! live event that finds no cycle before its thread is replayed measures nothing against the
//! past (a reply to a message stored before the upgrade counts as outgoing, not as a reply).

use std::collections::{BTreeMap, HashMap};

use diesel::sql_types::{Array, BigInt, Bool, Nullable, SmallInt, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::business_hours::BusinessHours;
use domain::messaging::Sender;
use domain::reports::{
    replay, BackfillThread, ConversationFact, Cycle, PastMessage, Responder, ThreadAtEvent, ThreadHistory,
};
use domain::threads::ThreadStatus;
use domain::workspace::WorkspaceId;
use time::OffsetDateTime;

use crate::pool::Db;

/// Threads replayed per transaction.
pub const BATCH: i64 = 2_000;

#[derive(QueryableByName)]
struct Claimed {
    #[diesel(sql_type = BigInt)]
    thread_id: i64,
    #[diesel(sql_type = BigInt)]
    workspace_id: i64,
    #[diesel(sql_type = BigInt)]
    channel_id: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    team_id: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    assignee_type: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    assignee_user_id: Option<i64>,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Timestamptz)]
    updated_at: OffsetDateTime,
    #[diesel(sql_type = Timestamptz)]
    noted_at: OffsetDateTime,
    /// The thread's first fact recorded live, if any: its history ends there.
    #[diesel(sql_type = Nullable<Timestamptz>)]
    live_since: Option<OffsetDateTime>,
}

/// A message of a thread's history as the replays read it (this backfill and the seed's).
#[derive(QueryableByName)]
pub(crate) struct MessageRow {
    #[diesel(sql_type = BigInt)]
    pub(crate) thread_id: i64,
    #[diesel(sql_type = Timestamptz)]
    pub(crate) created_at: OffsetDateTime,
    #[diesel(sql_type = Bool)]
    pub(crate) inbound: bool,
    #[diesel(sql_type = Text)]
    pub(crate) sender_type: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub(crate) sender_id: Option<i64>,
}

#[derive(QueryableByName)]
struct StatusRow {
    #[diesel(sql_type = BigInt)]
    thread_id: i64,
    #[diesel(sql_type = Timestamptz)]
    at: OffsetDateTime,
    #[diesel(sql_type = Bool)]
    resolved: bool,
}

/// Replays every noted thread (of `only`, when given), batch by batch, until none is left that
/// another instance is not replaying. Returns how many threads this call replayed.
///
/// # Errors
/// Database errors (the batch in hand rolls back and stays noted).
pub async fn run(db: &Db, only: Option<WorkspaceId>) -> anyhow::Result<u64> {
    let mut conn = db.conn().await?;
    let mut done = 0u64;
    loop {
        let n = conn.transaction::<_, diesel::result::Error, _>(|c| batch(c, only).scope_boxed()).await?;
        if n == 0 {
            return Ok(done);
        }
        done += n;
    }
}

/// Notes every thread of `ws` that has messages for a replay, in the caller's transaction, as the
/// reports' migration noted the threads stored before it.
///
/// # Errors
/// Database errors.
pub async fn note_workspace(conn: &mut AsyncPgConnection, ws: WorkspaceId) -> diesel::QueryResult<usize> {
    diesel::sql_query(
        "INSERT INTO conversation_backfill (thread_id, workspace_id, upto_message_id)
         SELECT thread_id, workspace_id, max(id) FROM messages WHERE workspace_id = $1 GROUP BY thread_id, workspace_id
         ON CONFLICT (thread_id) DO NOTHING",
    )
    .bind::<BigInt, _>(ws.0)
    .execute(conn)
    .await
}

/// Replays one batch of noted threads; 0 when none is left to claim.
async fn batch(c: &mut AsyncPgConnection, only: Option<WorkspaceId>) -> diesel::QueryResult<u64> {
    let claimed: Vec<Claimed> = diesel::sql_query(
        "WITH b AS (
             SELECT thread_id, workspace_id, upto_message_id, noted_at FROM conversation_backfill
             WHERE $1::bigint IS NULL OR workspace_id = $1
             ORDER BY workspace_id, thread_id LIMIT $2 FOR UPDATE SKIP LOCKED)
         SELECT b.thread_id, b.workspace_id, t.channel_id, t.team_id, t.assignee_type, t.assignee_user_id, t.status,
                t.updated_at, b.noted_at,
                (SELECT min(f.at) FROM conversation_facts f WHERE f.thread_id = b.thread_id) AS live_since
         FROM b JOIN threads t ON t.workspace_id = b.workspace_id AND t.id = b.thread_id
         ORDER BY b.workspace_id, b.thread_id",
    )
    .bind::<Nullable<BigInt>, _>(only.map(|w| w.0))
    .bind::<BigInt, _>(BATCH)
    .load(c)
    .await?;
    if claimed.is_empty() {
        return Ok(0);
    }
    // Figures that a crash would lose are replayed again: the batch stays noted until it commits.
    diesel::sql_query("SET LOCAL synchronous_commit = off").execute(c).await?;
    let ids: Vec<i64> = claimed.iter().map(|t| t.thread_id).collect();
    let messages: Vec<MessageRow> = diesel::sql_query(
        "SELECT m.thread_id, m.created_at, m.direction = 'inbound' AS inbound, m.sender_type, m.sender_id
         FROM conversation_backfill b
         JOIN messages m ON m.workspace_id = b.workspace_id AND m.thread_id = b.thread_id AND m.id <= b.upto_message_id
         WHERE b.thread_id = ANY($1)
         ORDER BY m.thread_id, m.id",
    )
    .bind::<Array<BigInt>, _>(&ids)
    .load(c)
    .await?;
    let statuses: Vec<StatusRow> = diesel::sql_query(
        "SELECT e.thread_id, e.created_at AS at, (e.payload::jsonb #>> '{data,status}') = 'resolved' AS resolved
         FROM conversation_backfill b
         JOIN webhook_events e ON e.workspace_id = b.workspace_id AND e.thread_id = b.thread_id
         WHERE b.thread_id = ANY($1) AND e.event_type = 'thread.status_changed' AND NOT e.sample
           AND e.created_at < b.noted_at
         ORDER BY e.thread_id, e.id",
    )
    .bind::<Array<BigInt>, _>(&ids)
    .load(c)
    .await?;
    let mut histories: HashMap<i64, ThreadHistory> = HashMap::new();
    for m in messages {
        let outbound_by = (!m.inbound).then(|| Responder::of(Sender::stored(&m.sender_type, m.sender_id)));
        histories.entry(m.thread_id).or_default().messages.push(PastMessage { at: m.created_at, outbound_by });
    }
    for s in statuses {
        histories.entry(s.thread_id).or_default().status_changes.push((s.at, s.resolved));
    }
    let mut hours: BTreeMap<i64, BusinessHours> = BTreeMap::new();
    for t in &claimed {
        if let std::collections::btree_map::Entry::Vacant(e) = hours.entry(t.workspace_id) {
            e.insert(crate::business_hours::load(c, WorkspaceId(t.workspace_id)).await?);
        }
    }
    let mut replayed: Vec<(&Claimed, ConversationFact)> = Vec::new();
    let mut cycles = CycleColumns::default();
    for t in &claimed {
        let history = histories.remove(&t.thread_id).unwrap_or_default().for_backfill(&BackfillThread {
            live_since: t.live_since,
            resolved_now: ThreadStatus::stored(&t.status) == ThreadStatus::Resolved,
            updated_at: t.updated_at,
            noted_at: t.noted_at,
        });
        let thread = ThreadAtEvent {
            team_id: t.team_id,
            assignee_user_id: t.assignee_user_id.filter(|_| t.assignee_type.as_deref() == Some("user")),
        };
        let r = replay(&history, thread, &hours[&t.workspace_id]);
        replayed.extend(r.facts.into_iter().map(|f| (t, f)));
        if let Some(cycle) = r.cycle {
            cycles.push(t.workspace_id, t.thread_id, &cycle);
        }
    }
    // In time order: the rows land next to each other in the period index, not all over it.
    replayed.sort_by_key(|(t, f)| (f.at, t.thread_id));
    let mut facts = FactColumns::default();
    for (t, f) in replayed {
        facts.push(t.workspace_id, t.thread_id, t.channel_id, &f);
    }
    facts.insert(c).await?;
    cycles.insert(c).await?;
    diesel::sql_query("DELETE FROM conversation_backfill WHERE thread_id = ANY($1)")
        .bind::<Array<BigInt>, _>(&ids)
        .execute(c)
        .await?;
    Ok(ids.len() as u64)
}

/// Facts to store, column by column (one `unnest` insert).
#[derive(Default)]
pub(crate) struct FactColumns {
    workspace_id: Vec<i64>,
    thread_id: Vec<i64>,
    channel_id: Vec<i64>,
    kind: Vec<i16>,
    at: Vec<OffsetDateTime>,
    started_at: Vec<Option<OffsetDateTime>>,
    seconds: Vec<Option<i64>>,
    business_seconds: Vec<Option<i64>>,
    user_id: Vec<Option<i64>>,
    team_id: Vec<Option<i64>>,
}

impl FactColumns {
    /// Adds fact `f` of thread `thread_id` on `channel_id` of workspace `ws`.
    pub(crate) fn push(&mut self, ws: i64, thread_id: i64, channel_id: i64, f: &ConversationFact) {
        self.workspace_id.push(ws);
        self.thread_id.push(thread_id);
        self.channel_id.push(channel_id);
        self.kind.push(f.kind.code());
        self.at.push(f.at);
        self.started_at.push(f.started_at);
        self.seconds.push(f.seconds);
        self.business_seconds.push(f.business_seconds);
        self.user_id.push(f.user_id);
        self.team_id.push(f.team_id);
    }

    /// Stores them in one statement (queued for the rollup by its trigger).
    pub(crate) async fn insert(&self, c: &mut AsyncPgConnection) -> diesel::QueryResult<usize> {
        diesel::sql_query(
            "INSERT INTO conversation_facts (workspace_id, thread_id, channel_id, kind, at, started_at, seconds,
                                         business_seconds, user_id, team_id)
         SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::smallint[], $5::timestamptz[],
                              $6::timestamptz[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[])",
        )
        .bind::<Array<BigInt>, _>(&self.workspace_id)
        .bind::<Array<BigInt>, _>(&self.thread_id)
        .bind::<Array<BigInt>, _>(&self.channel_id)
        .bind::<Array<SmallInt>, _>(&self.kind)
        .bind::<Array<Timestamptz>, _>(&self.at)
        .bind::<Array<Nullable<Timestamptz>>, _>(&self.started_at)
        .bind::<Array<Nullable<BigInt>>, _>(&self.seconds)
        .bind::<Array<Nullable<BigInt>>, _>(&self.business_seconds)
        .bind::<Array<Nullable<BigInt>>, _>(&self.user_id)
        .bind::<Array<Nullable<BigInt>>, _>(&self.team_id)
        .execute(c)
        .await
    }
}

/// Threads' cycles to store, column by column.
#[derive(Default)]
pub(crate) struct CycleColumns {
    thread_id: Vec<i64>,
    workspace_id: Vec<i64>,
    started_at: Vec<OffsetDateTime>,
    first_response_at: Vec<Option<OffsetDateTime>>,
    first_response_ai_at: Vec<Option<OffsetDateTime>>,
    awaiting_since: Vec<Option<OffsetDateTime>>,
}

impl CycleColumns {
    /// Adds the current cycle of thread `thread_id` of workspace `ws`.
    pub(crate) fn push(&mut self, ws: i64, thread_id: i64, cycle: &Cycle) {
        self.thread_id.push(thread_id);
        self.workspace_id.push(ws);
        self.started_at.push(cycle.started_at);
        self.first_response_at.push(cycle.first_response_at);
        self.first_response_ai_at.push(cycle.first_response_ai_at);
        self.awaiting_since.push(cycle.awaiting_since);
    }

    /// Stores them in one statement; a thread that has a cycle keeps it (one the live path
    /// started meanwhile is the thread's current one).
    pub(crate) async fn insert(&self, c: &mut AsyncPgConnection) -> diesel::QueryResult<usize> {
        diesel::sql_query(
        "INSERT INTO conversation_cycles (thread_id, workspace_id, started_at, first_response_at, first_response_ai_at,
                                          awaiting_since)
         SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::timestamptz[], $4::timestamptz[], $5::timestamptz[],
                              $6::timestamptz[])
         ON CONFLICT (thread_id) DO NOTHING",
    )
        .bind::<Array<BigInt>, _>(&self.thread_id)
        .bind::<Array<BigInt>, _>(&self.workspace_id)
        .bind::<Array<Timestamptz>, _>(&self.started_at)
        .bind::<Array<Nullable<Timestamptz>>, _>(&self.first_response_at)
        .bind::<Array<Nullable<Timestamptz>>, _>(&self.first_response_ai_at)
        .bind::<Array<Nullable<Timestamptz>>, _>(&self.awaiting_since)
        .execute(c)
        .await
    }
}
