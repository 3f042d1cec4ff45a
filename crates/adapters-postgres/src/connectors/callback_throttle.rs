//! Badly signed platform callbacks per client address, in PostgreSQL so that every instance
//! counts them together. They share the sign-in throttle's table (`login_throttle`: one row per
//! subject, its failures and when its window began) under subjects of their own
//! (`callback:ip:…`, [`ThrottleSubject::callbacks_from`]), and its daily clean-up.

use async_trait::async_trait;
use diesel::sql_types::{Integer, Text, Timestamptz};
use diesel::OptionalExtension;
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::auth::throttle::{ThrottleRecord, ThrottleSubject};
use domain::connectors::CallbackThrottle;
use domain::RepoError;
use time::{Duration, OffsetDateTime};

use crate::credentials::throttle::{lock_records, store_records};
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
        let subject = subject.clone();
        // Under the subject's lock, as a sign-in counts: concurrent failures from every instance
        // all count. Only failures that passed the address's check get here, and an address over
        // its budget is refused from memory, so a flood pays this at most the budget's times a
        // window.
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                let records = lock_records(conn, &[subject.as_str().to_owned()]).await?;
                let counted = ThrottleRecord::after_failure(&subject, <[_]>::first(&records), now, window);
                store_records(conn, &[counted]).await
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }
}
