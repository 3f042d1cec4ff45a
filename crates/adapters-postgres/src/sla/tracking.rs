//! A thread's SLA read and written inside the transaction of the change the domain decides on
//! (`domain::sla::tracking`): an inbound message, a response, a status change, the breach timer.
//! Each writer has locked the thread's row already (or, for a response, locks the SLA's row), so
//! the decision is over what it overwrites. `sla.breached` is recorded here and nowhere else
//! ([`announce`]), with the thread record as it is after the change.

use std::collections::HashMap;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::sla::{
    decide_inbound, decide_sla, Hours, InboundSlaFacts, SlaBreach, SlaDecision, SlaFact, SlaTarget, SlaTargets,
    SlaThreadFacts, ThreadSla, WallClock,
};
use domain::threads::ThreadStatus;
use domain::workspace::WorkspaceId;
use time::OffsetDateTime;

use crate::schema::thread_slas;
use crate::webhooks::outbox;

#[derive(Queryable, Selectable)]
#[diesel(table_name = thread_slas)]
struct SlaRow {
    thread_id: i64,
    policy_id: Option<i64>,
    first_response_seconds: Option<i64>,
    next_response_seconds: Option<i64>,
    resolution_seconds: Option<i64>,
    business_hours: bool,
    cycle_started_at: OffsetDateTime,
    first_response_due_at: Option<OffsetDateTime>,
    next_response_due_at: Option<OffsetDateTime>,
    resolution_due_at: Option<OffsetDateTime>,
    responded: bool,
    resolved: bool,
    stopped_since: Option<OffsetDateTime>,
    breaches: Vec<String>,
}

impl From<SlaRow> for ThreadSla {
    fn from(r: SlaRow) -> Self {
        ThreadSla {
            policy_id: r.policy_id,
            targets: SlaTargets {
                first_response: r.first_response_seconds,
                next_response: r.next_response_seconds,
                resolution: r.resolution_seconds,
            },
            business_hours: r.business_hours,
            cycle_started_at: r.cycle_started_at,
            first_response_due_at: r.first_response_due_at,
            next_response_due_at: r.next_response_due_at,
            resolution_due_at: r.resolution_due_at,
            responded: r.responded,
            resolved: r.resolved,
            stopped_since: r.stopped_since,
            breaches: r.breaches.iter().filter_map(|b| SlaTarget::stored(b)).collect(),
        }
    }
}

/// The SLAs of threads `ids` of `ws` (the thread record's `sla`).
pub(crate) async fn slas_of(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    ids: &[i64],
) -> QueryResult<HashMap<i64, ThreadSla>> {
    let rows: Vec<SlaRow> = thread_slas::table
        .filter(thread_slas::workspace_id.eq(ws.0))
        .filter(thread_slas::thread_id.eq_any(ids))
        .select(SlaRow::as_select())
        .load(conn)
        .await?;
    Ok(rows.into_iter().map(|r| (r.thread_id, ThreadSla::from(r))).collect())
}

/// The SLAs of threads `ids`, their rows locked in thread id order (`ids` sorted by the caller).
async fn lock(conn: &mut AsyncPgConnection, ws: WorkspaceId, ids: &[i64]) -> QueryResult<HashMap<i64, ThreadSla>> {
    let rows: Vec<SlaRow> = thread_slas::table
        .filter(thread_slas::workspace_id.eq(ws.0))
        .filter(thread_slas::thread_id.eq_any(ids))
        .order(thread_slas::thread_id.asc())
        .select(SlaRow::as_select())
        .for_update()
        .load(conn)
        .await?;
    Ok(rows.into_iter().map(|r| (r.thread_id, ThreadSla::from(r))).collect())
}

/// How the workspace counts business hours (every hour when it has none set), read in the
/// transaction only when `needed` (an SLA that counts business hours, or a cycle's start).
async fn business_hours(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    needed: bool,
) -> QueryResult<Box<dyn Hours + Send + Sync>> {
    if !needed {
        return Ok(Box::new(WallClock));
    }
    Ok(Box::new(crate::business_hours::load(conn, ws).await?))
}

/// Writes what the domain decided for `thread_id` (nothing when nothing changed).
async fn store(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    thread_id: i64,
    before: Option<&ThreadSla>,
    decision: &SlaDecision,
) -> QueryResult<()> {
    if !decision.changes(before) {
        return Ok(());
    }
    if let Some(hit) = decision.settled(before) {
        crate::reports::record_sla_outcome(conn, ws, thread_id, OffsetDateTime::now_utc(), hit).await?;
    }
    let target =
        thread_slas::table.filter(thread_slas::workspace_id.eq(ws.0)).filter(thread_slas::thread_id.eq(thread_id));
    let Some(s) = &decision.sla else {
        diesel::delete(target).execute(conn).await?;
        return Ok(());
    };
    let breaches: Vec<&str> = s.breaches.iter().map(|b| b.as_str()).collect();
    let values = (
        thread_slas::policy_id.eq(s.policy_id),
        thread_slas::first_response_seconds.eq(s.targets.first_response),
        thread_slas::next_response_seconds.eq(s.targets.next_response),
        thread_slas::resolution_seconds.eq(s.targets.resolution),
        thread_slas::business_hours.eq(s.business_hours),
        thread_slas::cycle_started_at.eq(s.cycle_started_at),
        thread_slas::first_response_due_at.eq(s.first_response_due_at),
        thread_slas::next_response_due_at.eq(s.next_response_due_at),
        thread_slas::resolution_due_at.eq(s.resolution_due_at),
        thread_slas::responded.eq(s.responded),
        thread_slas::resolved.eq(s.resolved),
        thread_slas::stopped_since.eq(s.stopped_since),
        thread_slas::breaches.eq(breaches),
        thread_slas::check_at.eq(s.next_check_at()),
        thread_slas::updated_at.eq(diesel::dsl::now),
    );
    diesel::insert_into(thread_slas::table)
        .values((thread_slas::workspace_id.eq(ws.0), thread_slas::thread_id.eq(thread_id), values.clone()))
        .on_conflict((thread_slas::workspace_id, thread_slas::thread_id))
        .do_update()
        .set(values)
        .execute(conn)
        .await?;
    Ok(())
}

/// Breaches to announce once the change's own writes and events are done.
#[derive(Debug, Default)]
#[must_use = "announce the breaches in the same transaction"]
pub(crate) struct Breaches(Vec<SlaBreach>);

impl Breaches {
    fn of(thread_id: i64, decision: &SlaDecision) -> Self {
        Self(decision.breaches(thread_id))
    }
}

/// Records one `sla.breached` per breach, with the thread record as it is now in the
/// transaction: the one place SLA events are recorded.
pub(crate) async fn announce(conn: &mut AsyncPgConnection, ws: WorkspaceId, breaches: Breaches) -> QueryResult<usize> {
    let n = breaches.0.len();
    for breach in breaches.0 {
        let thread =
            crate::threads::load(conn, ws, breach.thread_id, false).await?.ok_or(diesel::result::Error::NotFound)?;
        outbox::record(conn, ws, OffsetDateTime::now_utc(), &[breach.event(thread.into())]).await?;
    }
    Ok(n)
}

/// An inbound message stored on `thread_id` (its row locked): a cycle starts, or the running SLA
/// hears of the contact's message (after the reopening it caused). `status_before` is `None` for a
/// thread created by this message.
pub(crate) async fn on_inbound(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    thread_id: i64,
    status_before: Option<ThreadStatus>,
    had_inbound: bool,
    at: OffsetDateTime,
) -> QueryResult<Breaches> {
    let now = OffsetDateTime::now_utc();
    let current = lock(conn, ws, &[thread_id]).await?.remove(&thread_id);
    let starts =
        domain::sla::starts_cycle(status_before.unwrap_or(ThreadStatus::Open), had_inbound && status_before.is_some());
    if !starts && current.is_none() {
        return Ok(Breaches::default());
    }
    let (policies, thread) = if starts {
        let thread = crate::threads::load(conn, ws, thread_id, false).await?.ok_or(diesel::result::Error::NotFound)?;
        (super::policies::all(conn, ws).await?, SlaThreadFacts { channel_id: thread.channel_id, labels: thread.labels })
    } else {
        (Vec::new(), SlaThreadFacts { channel_id: 0, labels: Vec::new() })
    };
    let needed = starts || current.as_ref().is_some_and(|s| s.business_hours);
    let hours = business_hours(conn, ws, needed).await?;
    let facts = InboundSlaFacts { status_before, had_inbound, at, thread, policies: &policies };
    let decision = decide_inbound(current.as_ref(), &facts, hours.as_ref(), now);
    store(conn, ws, thread_id, current.as_ref(), &decision).await?;
    Ok(Breaches::of(thread_id, &decision))
}

/// Outbound messages by a member or AI agent stored on `thread_ids` at `now`: responses.
pub(crate) async fn on_responses(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    thread_ids: &[i64],
    now: OffsetDateTime,
) -> QueryResult<Breaches> {
    let mut ids = thread_ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let current = lock(conn, ws, &ids).await?;
    if current.is_empty() {
        return Ok(Breaches::default());
    }
    let hours = business_hours(conn, ws, current.values().any(|s| s.business_hours)).await?;
    let mut breaches = Breaches::default();
    for id in ids {
        let Some(before) = current.get(&id) else { continue };
        let decision = decide_sla(before, SlaFact::Response, hours.as_ref(), now);
        store(conn, ws, id, Some(before), &decision).await?;
        breaches.0.extend(Breaches::of(id, &decision).0);
    }
    Ok(breaches)
}

/// A status change of `thread_id` (its row locked).
pub(crate) async fn on_status(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    thread_id: i64,
    from: ThreadStatus,
    to: ThreadStatus,
) -> QueryResult<Breaches> {
    let Some(before) = lock(conn, ws, &[thread_id]).await?.remove(&thread_id) else {
        return Ok(Breaches::default());
    };
    let hours = business_hours(conn, ws, before.business_hours).await?;
    let decision = decide_sla(&before, SlaFact::StatusChanged { from, to }, hours.as_ref(), OffsetDateTime::now_utc());
    store(conn, ws, thread_id, Some(&before), &decision).await?;
    Ok(Breaches::of(thread_id, &decision))
}

/// The breach timer on `thread_id`, its SLA row claimed by the caller.
pub(crate) async fn on_tick(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    thread_id: i64,
    now: OffsetDateTime,
) -> QueryResult<Breaches> {
    let Some(before) = slas_of(conn, ws, &[thread_id]).await?.remove(&thread_id) else {
        return Ok(Breaches::default());
    };
    let hours = business_hours(conn, ws, before.business_hours).await?;
    let decision = decide_sla(&before, SlaFact::Tick, hours.as_ref(), now);
    store(conn, ws, thread_id, Some(&before), &decision).await?;
    if !decision.changes(Some(&before)) {
        // Claimed with nothing due (its stored time was stale): the row leaves the scan until
        // its time.
        let target =
            thread_slas::table.filter(thread_slas::workspace_id.eq(ws.0)).filter(thread_slas::thread_id.eq(thread_id));
        diesel::update(target).set(thread_slas::check_at.eq(before.next_check_at())).execute(conn).await?;
    }
    Ok(Breaches::of(thread_id, &decision))
}
