//! The sign-in throttle: a per-process gate in front of the reservations in PostgreSQL.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, Integer, Text, Timestamptz};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::auth::{release, LoginThrottleStore, ThrottlePolicy, ThrottleRecord, ThrottleSubject};
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;

/// [`LoginThrottleStore`] on PostgreSQL, so the throttle holds across instances.
///
/// In front of the database, each process lets at most one reservation per subject at a time
/// reach it, and remembers subjects the database refused until their window ends. A flood of
/// sign-ins for one e-mail or from one address then waits in memory, holding no pooled
/// connection, and all but the first few are refused without a query: without this, 500
/// concurrent attempts held every connection of the pool waiting on the subject's lock, and the
/// rest of the service waited for a connection (`scripts/bench-signin`).
#[derive(Debug, Clone)]
pub struct PgLoginThrottle {
    db: Db,
    gate: Arc<LocalGate>,
}

#[derive(Debug, Default)]
struct LocalGate {
    /// One queue per subject with reservations in flight in this process.
    turns: std::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Subjects the database refused, until the oldest of their budget's failures leaves the
    /// window. Never wrong for long: that only comes sooner when a reservation made before the
    /// budget was spent succeeds.
    refused: std::sync::Mutex<HashMap<String, OffsetDateTime>>,
}

/// Subjects remembered as refused before expired ones are swept.
const MAX_REMEMBERED: usize = 10_000;

impl LocalGate {
    fn refused_for(&self, keys: &[String], now: OffsetDateTime) -> Option<u64> {
        let refused = self.refused.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        keys.iter()
            .filter_map(|k| refused.get(k))
            .map(|until| *until - now)
            .filter(|left| left.is_positive())
            .max()
            .map(|left| u64::try_from(left.whole_seconds()).unwrap_or(0) + u64::from(left.subsec_nanoseconds() > 0))
    }

    fn remember(&self, key: String, until: OffsetDateTime, now: OffsetDateTime) {
        let mut refused = self.refused.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if refused.len() >= MAX_REMEMBERED {
            refused.retain(|_, u| *u > now);
        }
        refused.insert(key, until);
    }

    /// Waits for this process's turn on every subject, in sorted order (so never in a cycle).
    async fn turns(&self, keys: &[String]) -> Vec<tokio::sync::OwnedMutexGuard<()>> {
        let queues: Vec<Arc<tokio::sync::Mutex<()>>> = {
            let mut turns = self.turns.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            keys.iter().map(|k| turns.entry(k.clone()).or_default().clone()).collect()
        };
        let mut guards = Vec::with_capacity(queues.len());
        for q in queues {
            guards.push(q.lock_owned().await);
        }
        guards
    }

    /// Forgets the queues nobody waits in any more.
    fn sweep(&self, keys: &[String]) {
        let mut turns = self.turns.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for k in keys {
            if turns.get(k).is_some_and(|q| Arc::strong_count(q) == 1) {
                turns.remove(k);
            }
        }
    }
}

impl PgLoginThrottle {
    /// A throttle on `db`.
    pub fn new(db: Db) -> Self {
        Self { db, gate: Arc::default() }
    }
}

#[derive(QueryableByName)]
struct ThrottleRow {
    #[diesel(sql_type = Text)]
    subject: String,
    #[diesel(sql_type = Array<Timestamptz>)]
    failed_at: Vec<OffsetDateTime>,
}

impl From<ThrottleRow> for ThrottleRecord {
    fn from(r: ThrottleRow) -> Self {
        ThrottleRecord { subject: ThrottleSubject::from_stored(r.subject), failed_at: r.failed_at }
    }
}

/// The record of `subject`, read without its lock.
pub(crate) async fn read_record(
    conn: &mut diesel_async::AsyncPgConnection,
    subject: &ThrottleSubject,
) -> QueryResult<Option<ThrottleRecord>> {
    let row: Option<ThrottleRow> =
        diesel::sql_query("SELECT subject, failed_at FROM login_throttle WHERE subject = $1")
            .bind::<Text, _>(subject.as_str())
            .get_result(conn)
            .await
            .optional()?;
    Ok(row.map(ThrottleRecord::from))
}

/// The class of the advisory locks that serialise reservations of one throttle subject (the
/// two-key form, so it never meets the single-key locks taken elsewhere).
const THROTTLE_LOCK_CLASS: i32 = 0x7717_0001;

/// The records of `keys` (sorted), each subject's advisory lock taken first, until the
/// transaction ends. A transaction-scoped lock per subject (safe behind PgBouncer's transaction
/// pooling, unlike a session lock), taken in sorted order so that two reservations never wait on
/// each other in a cycle; it also covers subjects without a row yet, which `FOR UPDATE` could not.
pub(crate) async fn lock_records(
    conn: &mut diesel_async::AsyncPgConnection,
    keys: &[String],
) -> QueryResult<Vec<ThrottleRecord>> {
    for key in keys {
        diesel::sql_query("SELECT pg_advisory_xact_lock($1, hashtext($2))")
            .bind::<Integer, _>(THROTTLE_LOCK_CLASS)
            .bind::<Text, _>(key)
            .execute(conn)
            .await?;
    }
    let rows: Vec<ThrottleRow> =
        diesel::sql_query("SELECT subject, failed_at FROM login_throttle WHERE subject = ANY ($1)")
            .bind::<Array<Text>, _>(keys)
            .load(conn)
            .await?;
    Ok(rows.into_iter().map(ThrottleRecord::from).collect())
}

/// Stores `records` as they are (decided by [`ThrottleRecord::after_failure`] under the
/// subjects' locks).
pub(crate) async fn store_records(
    conn: &mut diesel_async::AsyncPgConnection,
    records: &[ThrottleRecord],
) -> QueryResult<()> {
    for record in records {
        let Some(last) = record.last_failed_at() else { continue };
        diesel::sql_query(
            "INSERT INTO login_throttle (subject, failed_at, last_failed_at) VALUES ($1, $2, $3) \
             ON CONFLICT (subject) DO UPDATE SET failed_at = excluded.failed_at, \
                                                 last_failed_at = excluded.last_failed_at",
        )
        .bind::<Text, _>(record.subject.as_str())
        .bind::<Array<Timestamptz>, _>(&record.failed_at)
        .bind::<Timestamptz, _>(last)
        .execute(conn)
        .await?;
    }
    Ok(())
}

#[async_trait]
impl LoginThrottleStore for PgLoginThrottle {
    async fn reserve(
        &self,
        subjects: &[ThrottleSubject],
        now: OffsetDateTime,
        policy: ThrottlePolicy,
    ) -> Result<Option<u64>, RepoError> {
        let mut keys: Vec<String> = subjects.iter().map(|s| s.as_str().to_owned()).collect();
        keys.sort();
        keys.dedup();
        if let Some(retry_after) = self.gate.refused_for(&keys, now) {
            return Ok(Some(retry_after));
        }
        let guards = self.gate.turns(&keys).await;
        let result = match self.gate.refused_for(&keys, now) {
            Some(retry_after) => Ok(Some(retry_after)),
            None => self.reserve_in_db(&keys, now, policy).await,
        };
        drop(guards);
        self.gate.sweep(&keys);
        result
    }

    async fn release(&self, forget: &ThrottleSubject, refund: &[ThrottleSubject]) -> Result<(), RepoError> {
        let mut keys: Vec<String> = std::iter::once(forget).chain(refund).map(|s| s.as_str().to_owned()).collect();
        keys.sort();
        keys.dedup();
        let (forget, refund) = (forget.clone(), refund.to_vec());
        let mut conn = self.db.conn().await.map_err(repo)?;
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                let records = lock_records(conn, &keys).await?;
                let released = release(&records, &forget, &refund);
                let gone: Vec<&str> = released.gone.iter().map(ThrottleSubject::as_str).collect();
                diesel::sql_query("DELETE FROM login_throttle WHERE subject = ANY ($1)")
                    .bind::<Array<Text>, _>(gone)
                    .execute(conn)
                    .await?;
                store_records(conn, &released.kept).await
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }
}

impl PgLoginThrottle {
    /// The reservation itself, atomic across instances; a refusal is remembered by the gate.
    async fn reserve_in_db(
        &self,
        keys: &[String],
        now: OffsetDateTime,
        policy: ThrottlePolicy,
    ) -> Result<Option<u64>, RepoError> {
        let keys = keys.to_vec();
        let gate = self.gate.clone();
        let mut conn = self.db.conn().await.map_err(repo)?;
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                // Reading the counts and counting the attempt must be one step, or concurrent
                // attempts all read the same count and all pass.
                let records = lock_records(conn, &keys).await?;
                // Refused: nothing is written, so a refusal never extends the window.
                if let Some(retry_after) = policy.retry_after(&records, now) {
                    for r in &records {
                        if let Some(until) = policy.refused_until(r, now) {
                            gate.remember(r.subject.as_str().to_owned(), until, now);
                        }
                    }
                    return Ok(Some(retry_after));
                }
                let counted: Vec<ThrottleRecord> = keys
                    .iter()
                    .map(|key| {
                        let subject = ThrottleSubject::from_stored(key.clone());
                        let earlier = records.iter().find(|r| r.subject == subject);
                        ThrottleRecord::after_failure(&subject, earlier, now, policy)
                    })
                    .collect();
                store_records(conn, &counted).await?;
                // Subjects nobody retried for a day are forgotten; cheap thanks to the index.
                diesel::sql_query("DELETE FROM login_throttle WHERE last_failed_at < $1 - interval '1 day'")
                    .bind::<Timestamptz, _>(now)
                    .execute(conn)
                    .await?;
                Ok(None)
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }
}
