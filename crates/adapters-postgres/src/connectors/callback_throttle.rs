//! Badly signed platform callbacks per client address, in PostgreSQL so that every instance
//! counts them together. They share the sign-in throttle's table (`login_throttle`: one row per
//! subject, its failures and when its window began) under subjects of their own
//! (`callback:ip:…`, [`ThrottleSubject::callbacks_from`]), and its daily clean-up.

use async_trait::async_trait;
use diesel::sql_types::{Integer, Text, Timestamptz};
use diesel::OptionalExtension;
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::auth::throttle::{ThrottleRecord, ThrottleSubject};
use domain::connectors::CallbackThrottle;
use domain::RepoError;
use time::{Duration, OffsetDateTime};

use crate::error::repo;
use crate::pool::Db;

/// [`CallbackThrottle`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgCallbackThrottle {
    db: Db,
}

impl PgCallbackThrottle {
    /// A throttle on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Integer)]
    failures: i32,
    #[diesel(sql_type = Timestamptz)]
    window_started_at: OffsetDateTime,
}

/// The most times one failure is tried again when other instances counted in between; each
/// lost race is another failure counted, so giving up undercounts by at most this one.
const MAX_RACES: usize = 16;

async fn read(conn: &mut AsyncPgConnection, subject: &ThrottleSubject) -> diesel::QueryResult<Option<ThrottleRecord>> {
    let row: Option<Row> =
        diesel::sql_query("SELECT failures, window_started_at FROM login_throttle WHERE subject = $1")
            .bind::<Text, _>(subject.as_str())
            .get_result(conn)
            .await
            .optional()?;
    Ok(row.map(|r| ThrottleRecord {
        subject: subject.clone(),
        failures: u32::try_from(r.failures).unwrap_or(0),
        window_started_at: r.window_started_at,
    }))
}

#[async_trait]
impl CallbackThrottle for PgCallbackThrottle {
    async fn record(&self, subject: &ThrottleSubject) -> Result<Option<ThrottleRecord>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        read(&mut conn, subject).await.map_err(repo)
    }

    async fn count_failure(
        &self,
        subject: &ThrottleSubject,
        now: OffsetDateTime,
        window: Duration,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        // Compare and set, without a transaction: the write only lands on the record it was
        // decided from, and a failure that lost the race to another instance's is decided
        // again. Two statements a badly signed callback, where a locked transaction took five.
        for _ in 0..MAX_RACES {
            let earlier = read(&mut conn, subject).await.map_err(repo)?;
            let next = ThrottleRecord::after_failure(subject, earlier.as_ref(), now, window);
            let failures = i32::try_from(next.failures).unwrap_or(i32::MAX);
            let written = match earlier {
                None => {
                    diesel::sql_query(
                        "INSERT INTO login_throttle (subject, failures, window_started_at) VALUES ($1, $2, $3)
                     ON CONFLICT (subject) DO NOTHING",
                    )
                    .bind::<Text, _>(subject.as_str())
                    .bind::<Integer, _>(failures)
                    .bind::<Timestamptz, _>(next.window_started_at)
                    .execute(&mut conn)
                    .await
                }
                Some(earlier) => {
                    diesel::sql_query(
                        "UPDATE login_throttle SET failures = $2, window_started_at = $3
                     WHERE subject = $1 AND failures = $4 AND window_started_at = $5",
                    )
                    .bind::<Text, _>(subject.as_str())
                    .bind::<Integer, _>(failures)
                    .bind::<Timestamptz, _>(next.window_started_at)
                    .bind::<Integer, _>(i32::try_from(earlier.failures).unwrap_or(i32::MAX))
                    .bind::<Timestamptz, _>(earlier.window_started_at)
                    .execute(&mut conn)
                    .await
                }
            }
            .map_err(repo)?;
            if written == 1 {
                return Ok(());
            }
        }
        tracing::warn!(subject = subject.as_str(), "callback failure not counted: lost {MAX_RACES} races");
        Ok(())
    }
}
