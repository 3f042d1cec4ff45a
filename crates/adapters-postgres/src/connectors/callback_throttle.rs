//! Badly signed platform callbacks per client address, in PostgreSQL so that every instance
//! counts them together. They share the sign-in throttle's table (`login_throttle`: one row per
//! subject, its failures and when its window began) under subjects of their own
//! (`callback:ip:…`, [`ThrottleSubject::callbacks_from`]), and its daily clean-up.

use async_trait::async_trait;
use diesel::sql_types::{Double, Integer, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
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

#[async_trait]
impl CallbackThrottle for PgCallbackThrottle {
    async fn record(&self, subject: &ThrottleSubject) -> Result<Option<ThrottleRecord>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<Row> =
            diesel::sql_query("SELECT failures, window_started_at FROM login_throttle WHERE subject = $1")
                .bind::<Text, _>(subject.as_str())
                .get_result(&mut conn)
                .await
                .map(Some)
                .or_else(|e| if e == diesel::result::Error::NotFound { Ok(None) } else { Err(e) })
                .map_err(repo)?;
        Ok(row.map(|r| ThrottleRecord {
            subject: subject.clone(),
            failures: u32::try_from(r.failures).unwrap_or(0),
            window_started_at: r.window_started_at,
        }))
    }

    async fn count_failure(
        &self,
        subject: &ThrottleSubject,
        now: OffsetDateTime,
        window: Duration,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        // One statement, atomic per row: concurrent failures from instances all count.
        diesel::sql_query(
            "INSERT INTO login_throttle (subject, failures, window_started_at) VALUES ($1, 1, $2)
             ON CONFLICT (subject) DO UPDATE SET
               failures = CASE WHEN login_throttle.window_started_at <= $2 - make_interval(secs => $3)
                               THEN 1 ELSE login_throttle.failures + 1 END,
               window_started_at = CASE WHEN login_throttle.window_started_at <= $2 - make_interval(secs => $3)
                                        THEN $2 ELSE login_throttle.window_started_at END",
        )
        .bind::<Text, _>(subject.as_str())
        .bind::<Timestamptz, _>(now)
        .bind::<Double, _>(window.as_seconds_f64())
        .execute(&mut conn)
        .await
        .map_err(repo)?;
        Ok(())
    }
}
