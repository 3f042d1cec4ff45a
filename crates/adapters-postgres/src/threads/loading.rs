//! Loading threads with their label names.

use std::collections::HashMap;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::threads::Thread;
use domain::workspace::WorkspaceId;

use super::ThreadRow;
use crate::schema::{labels, thread_labels, threads};

pub(crate) async fn load(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    id: i64,
    lock: bool,
) -> diesel::QueryResult<Option<Thread>> {
    let q =
        threads::table.filter(threads::workspace_id.eq(ws.0)).filter(threads::id.eq(id)).select(ThreadRow::as_select());
    let row = if lock { q.for_update().first(conn).await.optional()? } else { q.first(conn).await.optional()? };
    let Some(mut thread) = row.map(Thread::from) else { return Ok(None) };
    thread.labels = labels_of(conn, ws, &[id]).await?.remove(&id).unwrap_or_default();
    thread.sla = crate::sla::tracking::slas_of(conn, ws, &[id]).await?.remove(&id);
    Ok(Some(thread))
}

/// The threads `ids` of `ws` (with their labels), in id order.
pub(crate) async fn load_many(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    ids: &[i64],
) -> diesel::QueryResult<Vec<Thread>> {
    let rows: Vec<ThreadRow> = threads::table
        .filter(threads::workspace_id.eq(ws.0))
        .filter(threads::id.eq_any(ids))
        .order(threads::id.asc())
        .select(ThreadRow::as_select())
        .load(conn)
        .await?;
    let mut names = labels_of(conn, ws, ids).await?;
    let mut slas = crate::sla::tracking::slas_of(conn, ws, ids).await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let mut t = Thread::from(r);
            t.labels = names.remove(&t.id).unwrap_or_default();
            t.sla = slas.remove(&t.id);
            t
        })
        .collect())
}

/// The label names of each of `ids`, alphabetical ignoring case.
pub(super) async fn labels_of(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    ids: &[i64],
) -> diesel::QueryResult<HashMap<i64, Vec<String>>> {
    let rows: Vec<(i64, String)> = thread_labels::table
        .inner_join(
            labels::table
                .on(labels::workspace_id.eq(thread_labels::workspace_id).and(labels::id.eq(thread_labels::label_id))),
        )
        .filter(thread_labels::workspace_id.eq(ws.0))
        .filter(thread_labels::thread_id.eq_any(ids))
        .select((thread_labels::thread_id, labels::name))
        .load(conn)
        .await?;
    let mut by_thread: HashMap<i64, Vec<String>> = HashMap::new();
    for (thread, name) in rows {
        by_thread.entry(thread).or_default().push(name);
    }
    for names in by_thread.values_mut() {
        names.sort_by_cached_key(|n| n.to_lowercase());
    }
    Ok(by_thread)
}
