//! The demo threads' reports and SLAs, as the live path would have left them. Each thread's
//! messages and status changes (resolved after its last message, or once before the customer
//! reopened it and again at the end; set pending after its last message) are replayed through the
//! domain's own decisions, each at the time it happened: the reports' facts and cycle
//! ([`replay`], as for a thread stored before the reports existed), and its SLA under the
//! workspace's policies ([`replay_sla`]), whose outcomes are the reports' `sla` figures. What
//! runs past the seed's `now` is the live path's: a due time still ahead is the breach timer's.

use std::collections::HashMap;

use diesel::sql_types::{Array, BigInt, Bool, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::business_hours::BusinessHours;
use domain::messaging::Sender;
use domain::reports::{decide, replay, ConversationEvent, PastMessage, Responder, ThreadAtEvent, ThreadHistory};
use domain::sla::{counts_as_response, replay_sla, SlaEvent, SlaHistory, SlaPolicy, ThreadSla};
use domain::threads::ThreadStatus;
use domain::workspace::WorkspaceId;
use time::OffsetDateTime;

use crate::reports::backfill::{CycleColumns, FactColumns, MessageRow};

/// Threads replayed per round trip.
const BATCH: i64 = 5_000;

#[derive(QueryableByName)]
struct Planned {
    #[diesel(sql_type = BigInt)]
    id: i64,
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
    #[diesel(sql_type = Nullable<BigInt>)]
    reopen_seq: Option<i64>,
}

#[derive(QueryableByName)]
struct LabelRow {
    #[diesel(sql_type = BigInt)]
    thread_id: i64,
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct Now {
    #[diesel(sql_type = Timestamptz)]
    now: OffsetDateTime,
}

/// Replays every thread of `s_threads`, batch by batch, in the seed's transaction, after its
/// messages, labels, business hours and SLA policies are written.
pub(super) async fn replay_threads(c: &mut AsyncPgConnection, ws: i64) -> diesel::QueryResult<()> {
    let now = diesel::sql_query("SELECT now() AS now").get_result::<Now>(c).await?.now;
    let hours = crate::business_hours::load(c, WorkspaceId(ws)).await?;
    let policies = crate::sla::policies::all(c, WorkspaceId(ws)).await?;
    let mut from = 0;
    loop {
        let threads: Vec<Planned> = diesel::sql_query(
            "SELECT s.id, s.channel_id, t.team_id, s.assignee_type, s.assignee_user_id, s.status, t.updated_at, s.reopen_seq
             FROM s_threads s JOIN threads t ON t.workspace_id = $1 AND t.id = s.id
             WHERE s.n >= $2 AND s.n < $2 + $3 ORDER BY s.n",
        )
        .bind::<BigInt, _>(ws)
        .bind::<BigInt, _>(from)
        .bind::<BigInt, _>(BATCH)
        .load(c)
        .await?;
        if threads.is_empty() {
            return Ok(());
        }
        from += BATCH;
        batch(c, ws, &threads, &hours, &policies, now).await?;
    }
}

async fn batch(
    c: &mut AsyncPgConnection,
    ws: i64,
    threads: &[Planned],
    hours: &BusinessHours,
    policies: &[SlaPolicy],
    now: OffsetDateTime,
) -> diesel::QueryResult<()> {
    let ids: Vec<i64> = threads.iter().map(|t| t.id).collect();
    let rows: Vec<MessageRow> = diesel::sql_query(
        "SELECT thread_id, created_at, direction = 'inbound' AS inbound, sender_type, sender_id FROM messages
         WHERE workspace_id = $1 AND thread_id = ANY($2) ORDER BY thread_id, id",
    )
    .bind::<BigInt, _>(ws)
    .bind::<Array<BigInt>, _>(&ids)
    .load(c)
    .await?;
    let mut messages: HashMap<i64, Vec<MessageRow>> = HashMap::with_capacity(ids.len());
    for m in rows {
        messages.entry(m.thread_id).or_default().push(m);
    }
    let rows: Vec<LabelRow> = diesel::sql_query(
        "SELECT tl.thread_id, l.name FROM thread_labels tl JOIN labels l ON l.workspace_id = tl.workspace_id AND l.id = tl.label_id
         WHERE tl.workspace_id = $1 AND tl.thread_id = ANY($2)",
    )
    .bind::<BigInt, _>(ws)
    .bind::<Array<BigInt>, _>(&ids)
    .load(c)
    .await?;
    let mut labels: HashMap<i64, Vec<String>> = HashMap::new();
    for l in rows {
        labels.entry(l.thread_id).or_default().push(l.name);
    }

    let mut facts = Vec::new();
    let mut cycles = CycleColumns::default();
    let mut slas = SlaColumns::default();
    for t in threads {
        let (history, sla_history) =
            histories(t, messages.get(&t.id).map_or(&[][..], Vec::as_slice), labels.remove(&t.id).unwrap_or_default());
        let thread = ThreadAtEvent {
            team_id: t.team_id,
            assignee_user_id: t.assignee_user_id.filter(|_| t.assignee_type.as_deref() == Some("user")),
        };
        let r = replay(&history, thread, hours);
        if let Some(cycle) = r.cycle {
            cycles.push(ws, t.id, &cycle);
        }
        let sla = replay_sla(&sla_history, policies, hours, now);
        for (at, hit) in sla.outcomes {
            let outcome = decide(None, thread, ConversationEvent::SlaOutcome { at, hit }, hours);
            facts.extend(outcome.facts.into_iter().map(|f| (t, f)));
        }
        facts.extend(r.facts.into_iter().map(|f| (t, f)));
        if let Some(s) = sla.sla {
            slas.push(t.id, &s);
        }
    }
    // In time order: the rows land next to each other in the period index, not all over it.
    facts.sort_by_key(|(t, f)| (f.at, t.id));
    let mut columns = FactColumns::default();
    for (t, f) in &facts {
        columns.push(ws, t.id, t.channel_id, f);
    }
    columns.insert(c).await?;
    cycles.insert(c).await?;
    slas.insert(c, ws).await?;
    Ok(())
}

/// What the reports and the SLA hear of thread `t`: its messages, its status changes.
fn histories(t: &Planned, messages: &[MessageRow], labels: Vec<String>) -> (ThreadHistory, SlaHistory) {
    let mut history = ThreadHistory::default();
    let mut sla = SlaHistory { channel_id: t.channel_id, labels, events: Vec::with_capacity(messages.len() + 2) };
    // The team resolved the thread with the reply before the customer's message that reopened it.
    let resolved_before = t.reopen_seq.and_then(|r| usize::try_from(r - 1).ok());
    for (i, m) in messages.iter().enumerate() {
        let sender = Sender::stored(&m.sender_type, m.sender_id);
        let outbound_by = (!m.inbound).then(|| Responder::of(sender));
        history.messages.push(PastMessage { at: m.created_at, outbound_by });
        if m.inbound {
            sla.events.push((m.created_at, SlaEvent::Inbound));
        } else if counts_as_response(sender) {
            sla.events.push((m.created_at, SlaEvent::Response));
        }
        if resolved_before == Some(i) {
            history.status_changes.push((m.created_at, true));
            sla.events.push((m.created_at, SlaEvent::Status(ThreadStatus::Resolved)));
        } else if resolved_before.map(|r| r + 1) == Some(i) {
            history.status_changes.push((m.created_at, false));
        }
    }
    // The thread's status now was set with its last message (its `updated_at`).
    match t.status.as_str() {
        "resolved" => {
            history.status_changes.push((t.updated_at, true));
            sla.events.push((t.updated_at, SlaEvent::Status(ThreadStatus::Resolved)));
        }
        "pending" => sla.events.push((t.updated_at, SlaEvent::Status(ThreadStatus::Pending))),
        _ => {}
    }
    (history, sla)
}

/// Threads' SLAs to store, column by column (the breaches joined by commas).
#[derive(Default)]
struct SlaColumns {
    thread_id: Vec<i64>,
    policy_id: Vec<Option<i64>>,
    first_response_seconds: Vec<Option<i64>>,
    next_response_seconds: Vec<Option<i64>>,
    resolution_seconds: Vec<Option<i64>>,
    business_hours: Vec<bool>,
    cycle_started_at: Vec<OffsetDateTime>,
    first_response_due_at: Vec<Option<OffsetDateTime>>,
    next_response_due_at: Vec<Option<OffsetDateTime>>,
    resolution_due_at: Vec<Option<OffsetDateTime>>,
    responded: Vec<bool>,
    resolved: Vec<bool>,
    stopped_since: Vec<Option<OffsetDateTime>>,
    breaches: Vec<String>,
    check_at: Vec<Option<OffsetDateTime>>,
}

impl SlaColumns {
    fn push(&mut self, thread_id: i64, s: &ThreadSla) {
        self.thread_id.push(thread_id);
        self.policy_id.push(s.policy_id);
        self.first_response_seconds.push(s.targets.first_response);
        self.next_response_seconds.push(s.targets.next_response);
        self.resolution_seconds.push(s.targets.resolution);
        self.business_hours.push(s.business_hours);
        self.cycle_started_at.push(s.cycle_started_at);
        self.first_response_due_at.push(s.first_response_due_at);
        self.next_response_due_at.push(s.next_response_due_at);
        self.resolution_due_at.push(s.resolution_due_at);
        self.responded.push(s.responded);
        self.resolved.push(s.resolved);
        self.stopped_since.push(s.stopped_since);
        self.breaches.push(s.breaches.iter().map(|b| b.as_str()).collect::<Vec<_>>().join(","));
        self.check_at.push(s.next_check_at());
    }

    /// One row per thread, as the live path's writes leave it (`sla::tracking`).
    async fn insert(&self, c: &mut AsyncPgConnection, ws: i64) -> diesel::QueryResult<usize> {
        diesel::sql_query(
            "INSERT INTO thread_slas (workspace_id, thread_id, policy_id, first_response_seconds, next_response_seconds,
                                      resolution_seconds, business_hours, cycle_started_at, first_response_due_at,
                                      next_response_due_at, resolution_due_at, responded, resolved, stopped_since,
                                      breaches, check_at)
             SELECT $1, s.thread_id, s.policy_id, s.first_response_seconds, s.next_response_seconds, s.resolution_seconds,
                    s.business_hours, s.cycle_started_at, s.first_response_due_at, s.next_response_due_at,
                    s.resolution_due_at, s.responded, s.resolved, s.stopped_since,
                    coalesce(string_to_array(nullif(s.breaches, ''), ','), '{}'), s.check_at
             FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bool[],
                         $8::timestamptz[], $9::timestamptz[], $10::timestamptz[], $11::timestamptz[], $12::bool[],
                         $13::bool[], $14::timestamptz[], $15::text[], $16::timestamptz[])
                  AS s (thread_id, policy_id, first_response_seconds, next_response_seconds, resolution_seconds,
                        business_hours, cycle_started_at, first_response_due_at, next_response_due_at,
                        resolution_due_at, responded, resolved, stopped_since, breaches, check_at)",
        )
        .bind::<BigInt, _>(ws)
        .bind::<Array<BigInt>, _>(&self.thread_id)
        .bind::<Array<Nullable<BigInt>>, _>(&self.policy_id)
        .bind::<Array<Nullable<BigInt>>, _>(&self.first_response_seconds)
        .bind::<Array<Nullable<BigInt>>, _>(&self.next_response_seconds)
        .bind::<Array<Nullable<BigInt>>, _>(&self.resolution_seconds)
        .bind::<Array<Bool>, _>(&self.business_hours)
        .bind::<Array<Timestamptz>, _>(&self.cycle_started_at)
        .bind::<Array<Nullable<Timestamptz>>, _>(&self.first_response_due_at)
        .bind::<Array<Nullable<Timestamptz>>, _>(&self.next_response_due_at)
        .bind::<Array<Nullable<Timestamptz>>, _>(&self.resolution_due_at)
        .bind::<Array<Bool>, _>(&self.responded)
        .bind::<Array<Bool>, _>(&self.resolved)
        .bind::<Array<Nullable<Timestamptz>>, _>(&self.stopped_since)
        .bind::<Array<Text>, _>(&self.breaches)
        .bind::<Array<Nullable<Timestamptz>>, _>(&self.check_at)
        .execute(c)
        .await
    }
}
