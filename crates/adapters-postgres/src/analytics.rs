//! The Analytics page's top-countries export on PostgreSQL: messages of the period grouped by
//! their contact's country, read from the `contact_day_stats` rollup (migration
//! `2026-11-26-000303_contact_day_stats`). Runs in the assistant's read-only transaction and, like it, scopes
//! every table of the join by workspace.

use async_trait::async_trait;
use diesel::sql_types::{Array, BigInt, Date as SqlDate, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::RunQueryDsl;
use domain::analytics::{CountryFigures, CountryStats, TopCountries};
use domain::assistant::DeliveryCounts;
use domain::channels::ChannelId;
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::{Date, Duration, OffsetDateTime};

use crate::assistant::read_only;
use crate::pool::Db;

/// [`CountryStats`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgCountryStats {
    db: Db,
}

impl PgCountryStats {
    /// Figures read from `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct Clock {
    #[diesel(sql_type = Text)]
    time_zone: String,
    #[diesel(sql_type = SqlDate)]
    today: Date,
}

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

#[derive(QueryableByName)]
struct CountryRow {
    #[diesel(sql_type = Nullable<Text>)]
    country: Option<String>,
    #[diesel(sql_type = BigInt)]
    contacts: i64,
    #[diesel(sql_type = BigInt)]
    inbound: i64,
    #[diesel(sql_type = BigInt)]
    sent: i64,
    #[diesel(sql_type = BigInt)]
    delivered: i64,
    #[diesel(sql_type = BigInt)]
    read: i64,
    #[diesel(sql_type = BigInt)]
    failed: i64,
}

#[async_trait]
impl CountryStats for PgCountryStats {
    async fn top_countries(
        &self,
        ws: WorkspaceId,
        channel: Option<ChannelId>,
        days: u16,
        now: OffsetDateTime,
    ) -> Result<Option<TopCountries>, RepoError> {
        read_only(&self.db, move |c| {
            async move {
                let ids: Vec<Id> = diesel::sql_query(
                    "SELECT id FROM channels
                     WHERE workspace_id = $1 AND (id = $2 OR ($2 IS NULL AND channel_type = 'whatsapp')) ORDER BY id",
                )
                .bind::<BigInt, _>(ws.0)
                .bind::<Nullable<BigInt>, _>(channel.map(|c| c.0))
                .load(c)
                .await?;
                if channel.is_some() && ids.is_empty() {
                    return Ok(None);
                }
                let clock: Clock = diesel::sql_query(
                    "SELECT time_zone, ($2 AT TIME ZONE time_zone)::date AS today FROM workspaces WHERE id = $1",
                )
                .bind::<BigInt, _>(ws.0)
                .bind::<Timestamptz, _>(now)
                .get_result(c)
                .await?;
                let from = clock.today.checked_sub(Duration::days(i64::from(days.max(1)) - 1)).unwrap_or(clock.today);
                let until = clock.today.next_day().unwrap_or(clock.today);
                let ids: Vec<i64> = ids.into_iter().map(|i| i.id).collect();
                // Each message counts on the calendar day it was created in the workspace's time
                // zone, as in the daily series: the rollup's rows of the period (one per channel,
                // day and contact, kept by triggers on `messages`), summed per contact first (a
                // hash aggregate: each contact counted once however many channels and days it
                // has, without sorting for a DISTINCT), then per the country its record has now.
                let rows: Vec<CountryRow> = diesel::sql_query(
                    "SELECT upper(nullif(btrim(ct.country), '')) AS country,
                            count(*)::bigint AS contacts,
                            sum(c.inbound)::bigint AS inbound,
                            sum(c.sent)::bigint AS sent,
                            sum(c.delivered)::bigint AS delivered,
                            sum(c.read)::bigint AS read,
                            sum(c.failed)::bigint AS failed
                     FROM (SELECT s.contact_id, sum(s.inbound) AS inbound, sum(s.sent) AS sent,
                                  sum(s.delivered) AS delivered, sum(s.read) AS read, sum(s.failed) AS failed
                           FROM contact_day_stats s
                           WHERE s.workspace_id = $1 AND s.channel_id = ANY($2)
                             AND s.day >= $3 AND s.day < $4 AND s.messages > 0
                           GROUP BY s.contact_id) c
                     JOIN contacts ct ON ct.id = c.contact_id AND ct.workspace_id = $1
                     GROUP BY 1",
                )
                .bind::<BigInt, _>(ws.0)
                .bind::<Array<BigInt>, _>(&ids)
                .bind::<SqlDate, _>(from)
                .bind::<SqlDate, _>(until)
                .load(c)
                .await?;
                let rows = rows
                    .into_iter()
                    .map(|r| CountryFigures {
                        country: r.country,
                        contacts: r.contacts,
                        inbound: r.inbound,
                        outbound: DeliveryCounts {
                            sent: r.sent,
                            delivered: r.delivered,
                            read: r.read,
                            failed: r.failed,
                        },
                    })
                    .collect();
                Ok(Some(TopCountries { from, to: clock.today, time_zone: clock.time_zone, rows }.ranked()))
            }
            .scope_boxed()
        })
        .await
    }
}
