//! Badly signed platform callbacks per client address, in PostgreSQL so that every instance
//! counts them together. They share the sign-in throttle's table (`login_throttle`: one row per
//! subject, the times of its latest failures) under subjects of their own
//! (`callback:ip:…`, [`ThrottleSubject::callbacks_from`]), and its daily clean-up.

use async_trait::async_trait;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use domain::auth::throttle::{ThrottlePolicy, ThrottleRecord, ThrottleSubject};
use domain::connectors::CallbackThrottle;
use domain::RepoError;
use time::OffsetDateTime;

use crate::credentials::throttle::{lock_records, read_record, store_records};
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

#[async_trait]
impl CallbackThrottle for PgCallbackThrottle {
    async fn record(&self, subject: &ThrottleSubject) -> Result<Option<ThrottleRecord>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        read_record(&mut conn, subject).await.map_err(repo)
    }

    async fn count_failure(
        &self,
        subject: &ThrottleSubject,
        now: OffsetDateTime,
        policy: ThrottlePolicy,
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
                let counted = ThrottleRecord::after_failure(&subject, <[_]>::first(&records), now, policy);
                store_records(conn, &[counted]).await
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }
}
