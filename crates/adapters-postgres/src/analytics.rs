//! The Analytics page's top-countries export on PostgreSQL: messages of the period grouped by
//! their contact's country, read from the `country_day_stats` summary (migration
//! `2026-11-27-000601_country_day_stats`), or from the `contact_day_stats` rollup (migration
//! `2026-11-26-000303_contact_day_stats`) when a contact was active after the period. Runs in the
//! assistant's read-only transaction and, like it, scopes every table of the join by workspace.

use async_trait::async_trait;
use diesel::sql_types::{Array, BigInt, Date as SqlDate, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::RunQueryDsl;
use domain::analytics::{CountryFigures, CountryStats, TopCountries};
use domain::assistant::DeliveryCounts;
use domain::channels::{figures_scope, ChannelId, ChannelType, FiguresScope};
use domain::common::error::FieldError;
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
struct ChannelRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    channel_type: String,
}

#[derive(QueryableByName)]
struct Exists {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    found: bool,
}

/// The period's figures from the summary: the contacts counted on the selection's scope (`$5`),
/// the messages' figures summed over its channels (`$2`).
const SUMMARY_SQL: &str = "SELECT nullif(country, '') AS country,
        coalesce(sum(contacts) FILTER (WHERE scope_id = $5), 0)::bigint AS contacts,
        coalesce(sum(inbound) FILTER (WHERE scope_id = ANY($2)), 0)::bigint AS inbound,
        coalesce(sum(sent) FILTER (WHERE scope_id = ANY($2)), 0)::bigint AS sent,
        coalesce(sum(delivered) FILTER (WHERE scope_id = ANY($2)), 0)::bigint AS delivered,
        coalesce(sum(read) FILTER (WHERE scope_id = ANY($2)), 0)::bigint AS read,
        coalesce(sum(failed) FILTER (WHERE scope_id = ANY($2)), 0)::bigint AS failed
 FROM country_day_stats
 WHERE workspace_id = $1 AND (scope_id = $5 OR scope_id = ANY($2)) AND day >= $3 AND day < $4
 GROUP BY country
 HAVING sum(contacts) FILTER (WHERE scope_id = $5) > 0";

/// The period's figures from the rows of each contact and day: summed per contact first (a hash
/// aggregate: each contact counted once however many channels and days it has, without sorting
/// for a DISTINCT), then per the country its record has now.
const PER_CONTACT_SQL: &str = "SELECT upper(nullif(btrim(ct.country), '')) AS country,
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
 GROUP BY 1";

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
                let channels: Vec<ChannelRow> =
                    diesel::sql_query("SELECT id, channel_type FROM channels WHERE workspace_id = $1 ORDER BY id")
                        .bind::<BigInt, _>(ws.0)
                        .load(c)
                        .await?;
                let channels = channels
                    .into_iter()
                    .map(|r| r.channel_type.parse().map(|t| (ChannelId(r.id), t)))
                    .collect::<Result<Vec<(ChannelId, ChannelType)>, _>>()
                    .map_err(|e: FieldError| diesel::result::Error::DeserializationError(e.message.into()))?;
                // A Messenger or Instagram channel asked for gets its own (empty) figures.
                let ids: Vec<i64> = match figures_scope(channels, channel, |c| *c) {
                    FiguresScope::Unknown => return Ok(None),
                    FiguresScope::One((id, _)) | FiguresScope::OtherPlatform((id, _)) => vec![id.0],
                    FiguresScope::Every(channels) => channels.into_iter().map(|(id, _)| id.0).collect(),
                };
                let clock: Clock = diesel::sql_query(
                    "SELECT time_zone, ($2 AT TIME ZONE time_zone)::date AS today FROM workspaces WHERE id = $1",
                )
                .bind::<BigInt, _>(ws.0)
                .bind::<Timestamptz, _>(now)
                .get_result(c)
                .await?;
                let from = clock.today.checked_sub(Duration::days(i64::from(days.max(1)) - 1)).unwrap_or(clock.today);
                let until = clock.today.next_day().unwrap_or(clock.today);
                // Each message counts on the calendar day it was created in the workspace's time
                // zone, as in the daily series. The period ends today, so a contact counts in it
                // exactly when its latest day with messages in the selection falls in it:
                // `country_day_stats` (migration `2026-11-27-000601_country_day_stats`, kept by
                // triggers) holds per scope (the channel, or 0 for all WhatsApp channels), day and
                // country how many contacts have that day as their latest, and per channel the
                // messages' figures, so the period is at most days x countries x 4 rows per scope.
                // A contact whose latest day is after the period (a message dated in the future,
                // or a `now` in the past) would be missed: then the figures come from the rows of
                // each contact and day instead (`contact_day_stats`), slower but exact too.
                let scope = channel.map_or(0, |c| c.0);
                let later: Exists = diesel::sql_query(
                    "SELECT EXISTS (SELECT 1 FROM country_day_stats
                                    WHERE workspace_id = $1 AND scope_id = $2 AND day >= $3 AND contacts > 0) AS found",
                )
                .bind::<BigInt, _>(ws.0)
                .bind::<BigInt, _>(scope)
                .bind::<SqlDate, _>(until)
                .get_result(c)
                .await?;
                let rows: Vec<CountryRow> = if later.found {
                    diesel::sql_query(PER_CONTACT_SQL)
                        .bind::<BigInt, _>(ws.0)
                        .bind::<Array<BigInt>, _>(&ids)
                        .bind::<SqlDate, _>(from)
                        .bind::<SqlDate, _>(until)
                        .load(c)
                        .await?
                } else {
                    diesel::sql_query(SUMMARY_SQL)
                        .bind::<BigInt, _>(ws.0)
                        .bind::<Array<BigInt>, _>(&ids)
                        .bind::<SqlDate, _>(from)
                        .bind::<SqlDate, _>(until)
                        .bind::<BigInt, _>(scope)
                        .load(c)
                        .await?
                };
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
