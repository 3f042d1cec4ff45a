//! Reading the delivery log: deliveries newest first, each with its attempts.

use std::collections::HashMap;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::common::page::{Page, PageRequest};
use domain::webhooks::{AttemptTrigger, Delivery, DeliveryAttempt, DeliveryId, DeliveryStatus, DestinationId};
use domain::workspace::WorkspaceId;
use time::OffsetDateTime;

use crate::schema::{webhook_attempts, webhook_deliveries, webhook_destinations, webhook_events};

#[derive(Queryable)]
struct DeliveryRow {
    id: i64,
    destination_id: i64,
    status: String,
    attempt_count: i32,
    next_attempt_at: Option<OffsetDateTime>,
    created_at: OffsetDateTime,
    message_id: String,
    event_type: String,
    payload: String,
}

#[derive(Queryable)]
struct AttemptRow {
    delivery_id: i64,
    attempt_number: i32,
    trigger: String,
    attempted_at: OffsetDateTime,
    status_code: Option<i32>,
    error: Option<String>,
    duration_ms: i32,
    response_excerpt: String,
    next_attempt_at: Option<OffsetDateTime>,
}

type DeliveryColumns = (
    webhook_deliveries::id,
    webhook_deliveries::destination_id,
    webhook_deliveries::status,
    webhook_deliveries::attempt_count,
    webhook_deliveries::next_attempt_at,
    webhook_deliveries::created_at,
    webhook_events::message_id,
    webhook_events::event_type,
    webhook_events::payload,
);

const DELIVERY_COLUMNS: DeliveryColumns = (
    webhook_deliveries::id,
    webhook_deliveries::destination_id,
    webhook_deliveries::status,
    webhook_deliveries::attempt_count,
    webhook_deliveries::next_attempt_at,
    webhook_deliveries::created_at,
    webhook_events::message_id,
    webhook_events::event_type,
    webhook_events::payload,
);

/// One page of a destination's deliveries; `None` when the destination is not the workspace's.
pub(super) async fn page(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    id: DestinationId,
    page: PageRequest,
) -> QueryResult<Option<Page<Delivery>>> {
    let exists: Option<i64> = webhook_destinations::table
        .filter(webhook_destinations::workspace_id.eq(ws.0))
        .filter(webhook_destinations::id.eq(id.0))
        .select(webhook_destinations::id)
        .first(conn)
        .await
        .optional()?;
    if exists.is_none() {
        return Ok(None);
    }
    let mut query = webhook_deliveries::table
        .inner_join(webhook_events::table.on(webhook_events::id.eq(webhook_deliveries::event_id)))
        .filter(webhook_deliveries::workspace_id.eq(ws.0))
        .filter(webhook_deliveries::destination_id.eq(id.0))
        .order(webhook_deliveries::id.desc())
        .limit(page.fetch())
        .select(DELIVERY_COLUMNS)
        .into_boxed();
    if let Some(after) = page.after {
        query = query.filter(webhook_deliveries::id.lt(after));
    }
    let rows: Vec<DeliveryRow> = query.load(conn).await?;
    let page = Page::from_rows(rows, page, |r| r.id);
    let ids: Vec<i64> = page.data.iter().map(|r| r.id).collect();
    let mut attempts = attempts_of(conn, &ids).await?;
    Ok(Some(page.map(|r| {
        let a = attempts.remove(&r.id).unwrap_or_default();
        to_delivery(r, a)
    })))
}

/// One delivery of a destination.
pub(super) async fn one(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    id: DestinationId,
    delivery: DeliveryId,
) -> QueryResult<Option<Delivery>> {
    let row: Option<DeliveryRow> = webhook_deliveries::table
        .inner_join(webhook_events::table.on(webhook_events::id.eq(webhook_deliveries::event_id)))
        .filter(webhook_deliveries::workspace_id.eq(ws.0))
        .filter(webhook_deliveries::destination_id.eq(id.0))
        .filter(webhook_deliveries::id.eq(delivery.0))
        .select(DELIVERY_COLUMNS)
        .first(conn)
        .await
        .optional()?;
    let Some(row) = row else { return Ok(None) };
    let mut attempts = attempts_of(conn, &[row.id]).await?;
    let a = attempts.remove(&row.id).unwrap_or_default();
    Ok(Some(to_delivery(row, a)))
}

async fn attempts_of(conn: &mut AsyncPgConnection, ids: &[i64]) -> QueryResult<HashMap<i64, Vec<DeliveryAttempt>>> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let rows: Vec<AttemptRow> = webhook_attempts::table
        .filter(webhook_attempts::delivery_id.eq_any(ids))
        .order((webhook_attempts::delivery_id, webhook_attempts::attempt_number, webhook_attempts::id))
        .select((
            webhook_attempts::delivery_id,
            webhook_attempts::attempt_number,
            webhook_attempts::trigger,
            webhook_attempts::attempted_at,
            webhook_attempts::status_code,
            webhook_attempts::error,
            webhook_attempts::duration_ms,
            webhook_attempts::response_excerpt,
            webhook_attempts::next_attempt_at,
        ))
        .load(conn)
        .await?;
    let mut out: HashMap<i64, Vec<DeliveryAttempt>> = HashMap::new();
    for r in rows {
        out.entry(r.delivery_id).or_default().push(DeliveryAttempt {
            attempt_number: r.attempt_number,
            trigger: r.trigger.parse().unwrap_or(AttemptTrigger::Scheduled),
            attempted_at: r.attempted_at,
            status_code: r.status_code.and_then(|s| u16::try_from(s).ok()),
            error: r.error,
            duration_ms: i64::from(r.duration_ms),
            response_excerpt: r.response_excerpt,
            next_attempt_at: r.next_attempt_at,
        });
    }
    Ok(out)
}

fn to_delivery(r: DeliveryRow, attempts: Vec<DeliveryAttempt>) -> Delivery {
    let status = r.status.parse().unwrap_or(DeliveryStatus::Pending);
    Delivery {
        id: DeliveryId(r.id),
        destination_id: DestinationId(r.destination_id),
        message_id: r.message_id,
        event_type: r.event_type,
        payload: r.payload,
        next_attempt_at: status.planned_attempt(r.next_attempt_at),
        status,
        attempt_count: r.attempt_count,
        created_at: r.created_at,
        attempts,
    }
}
