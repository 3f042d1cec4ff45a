//! The work queues' depth and age, read when the metrics are scraped: the webhook deliveries
//! waiting to be sent, the outbound messages waiting for their platform and the e-mails waiting
//! in the outbox, across every instance.

use diesel::sql_types::{BigInt, Double, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use crate::pool::{Db, PoolError};

/// One queue's backlog.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct QueueStat {
    /// `webhooks` (deliveries pending or being sent), `connectors` (outbound messages queued) or
    /// `mail` (e-mails waiting in the outbox or being sent).
    #[diesel(sql_type = Text)]
    pub queue: String,
    /// Items waiting (due or scheduled for later) or in flight.
    #[diesel(sql_type = BigInt)]
    pub depth: i64,
    /// How long the item that is due longest has waited since it fell due, in seconds (0 when
    /// nothing due waits): the queue's lag behind its work.
    #[diesel(sql_type = Double)]
    pub oldest_age_secs: f64,
}

/// Why the queues could not be read.
#[derive(Debug, thiserror::Error)]
pub enum QueueStatsError {
    /// No connection in time.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// The query failed.
    #[error("cannot read the queues: {0}")]
    Query(#[from] diesel::result::Error),
}

/// The queues' backlog, from their partial indexes (`webhook_deliveries_due_idx`,
/// `messages_queued_channel_idx`, `mail_outbox_due_idx`).
///
/// # Errors
/// When the database cannot be reached or the query fails.
pub async fn queue_stats(db: &Db) -> Result<Vec<QueueStat>, QueueStatsError> {
    let mut conn = db.conn().await?;
    let rows = diesel::sql_query(
        "SELECT 'webhooks' AS queue, count(*) AS depth,
                COALESCE(EXTRACT(EPOCH FROM now() - min(next_attempt_at)
                    FILTER (WHERE status = 'pending' AND next_attempt_at <= now())), 0)::float8 AS oldest_age_secs
         FROM webhook_deliveries WHERE status IN ('pending', 'sending')
         UNION ALL
         SELECT 'connectors', count(*),
                COALESCE(EXTRACT(EPOCH FROM now() - min(COALESCE(next_dispatch_at, created_at))
                    FILTER (WHERE next_dispatch_at IS NULL OR next_dispatch_at <= now())), 0)::float8
         FROM messages WHERE status = 'queued' AND direction = 'outbound'
         UNION ALL
         SELECT 'mail', count(*),
                COALESCE(EXTRACT(EPOCH FROM now() - min(next_attempt_at)
                    FILTER (WHERE status = 'pending' AND next_attempt_at <= now())), 0)::float8
         FROM mail_outbox WHERE status IN ('pending', 'sending')",
    )
    .load(&mut conn)
    .await?;
    Ok(rows)
}
