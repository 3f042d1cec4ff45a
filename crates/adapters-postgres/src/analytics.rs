//! The Analytics page's top-countries export on PostgreSQL: messages of the period grouped by
//! their contact's country. Runs in the assistant's read-only transaction and, like it, scopes
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
                // zone, as in the daily series.
                let rows: Vec<CountryRow> = diesel::sql_query(
                    "SELECT upper(nullif(btrim(ct.country), '')) AS country,
                            count(DISTINCT ct.id)::bigint AS contacts,
                            count(*) FILTER (WHERE m.direction = 'inbound')::bigint AS inbound,
                            count(*) FILTER (WHERE m.direction = 'outbound'
                                             AND m.status IN ('sent', 'delivered', 'read'))::bigint AS sent,
                            count(*) FILTER (WHERE m.direction = 'outbound'
                                             AND m.status IN ('delivered', 'read'))::bigint AS delivered,
                            count(*) FILTER (WHERE m.direction = 'outbound' AND m.status = 'read')::bigint AS read,
                            count(*) FILTER (WHERE m.direction = 'outbound' AND m.status = 'failed')::bigint AS failed
                     FROM messages m
                     JOIN threads t ON t.id = m.thread_id AND t.workspace_id = m.workspace_id
                     JOIN contacts ct ON ct.id = t.contact_id AND ct.workspace_id = m.workspace_id
                     WHERE m.workspace_id = $1 AND m.channel_id = ANY($2)
                       AND m.created_at >= ($3::timestamp AT TIME ZONE $5)
                       AND m.created_at < ($4::timestamp AT TIME ZONE $5)
                     GROUP BY 1",
                )
                .bind::<BigInt, _>(ws.0)
                .bind::<Array<BigInt>, _>(&ids)
                .bind::<SqlDate, _>(from)
                .bind::<SqlDate, _>(until)
                .bind::<Text, _>(&clock.time_zone)
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
