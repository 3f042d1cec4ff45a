//! `get_channel_analytics`: daily WhatsApp figures from the `message_daily_stats` rollup.

use diesel::sql_types::{Array, BigInt, Date as SqlDate, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::{ScopedBoxFuture, ScopedFutureExt};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::assistant::{ChannelStats, DeliveryCounts, WhatsappDays};
use domain::channels::{figures_scope, ChannelId, FiguresScope};
use domain::workspace::WorkspaceId;
use time::{Date, Duration, OffsetDateTime};

use super::overview::ChannelRow;

#[derive(QueryableByName)]
pub(super) struct Clock {
    #[diesel(sql_type = Text)]
    pub time_zone: String,
    #[diesel(sql_type = SqlDate)]
    pub today: Date,
}

/// The workspace's time zone and today's date in it at `now`.
pub(super) async fn today(
    c: &mut AsyncPgConnection,
    ws: WorkspaceId,
    now: OffsetDateTime,
) -> Result<Clock, diesel::result::Error> {
    diesel::sql_query("SELECT time_zone, ($2 AT TIME ZONE time_zone)::date AS today FROM workspaces WHERE id = $1")
        .bind::<BigInt, _>(ws.0)
        .bind::<Timestamptz, _>(now)
        .get_result(c)
        .await
}

/// The first day of `days` days ending `today`.
pub(super) fn first_day(today: Date, days: u16) -> Date {
    today.checked_sub(Duration::days(i64::from(days.max(1)) - 1)).unwrap_or(today)
}

#[derive(QueryableByName)]
struct DayRow {
    #[diesel(sql_type = SqlDate)]
    day: Date,
    #[diesel(sql_type = BigInt)]
    sent: i64,
    #[diesel(sql_type = BigInt)]
    delivered: i64,
    #[diesel(sql_type = BigInt)]
    read: i64,
    #[diesel(sql_type = BigInt)]
    failed: i64,
}

/// `None` when the workspace has no channel `channel`.
pub(super) fn load(
    c: &mut AsyncPgConnection,
    ws: WorkspaceId,
    channel: Option<ChannelId>,
    days: u16,
    now: OffsetDateTime,
) -> ScopedBoxFuture<'static, '_, Result<Option<ChannelStats>, diesel::result::Error>> {
    async move {
        let rows: Vec<ChannelRow> = diesel::sql_query(
            "SELECT id, channel_type, display_name, identifier, status FROM channels
             WHERE workspace_id = $1 ORDER BY id",
        )
        .bind::<BigInt, _>(ws.0)
        .load(c)
        .await?;
        let all = rows.into_iter().map(ChannelRow::into_summary).collect::<Result<Vec<_>, _>>()?;
        let (asked, channels) = match figures_scope(all, channel, |ch| (ch.id, ch.channel_type)) {
            FiguresScope::Unknown => return Ok(None),
            FiguresScope::OtherPlatform(ch) => return Ok(Some(ChannelStats::OtherPlatform(ch))),
            FiguresScope::One(ch) => (Some(ch.clone()), vec![ch]),
            FiguresScope::Every(channels) => (None, channels),
        };
        let clock = today(c, ws, now).await?;
        let ids: Vec<i64> = channels.iter().map(|ch| ch.id.0).collect();
        let rows: Vec<DayRow> = diesel::sql_query(
            "SELECT day, sum(sent)::bigint AS sent, sum(delivered)::bigint AS delivered, sum(read)::bigint AS read,
                    sum(failed)::bigint AS failed
             FROM message_daily_stats
             WHERE workspace_id = $1 AND channel_id = ANY($2) AND day BETWEEN $3 AND $4
             GROUP BY day",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<Array<BigInt>, _>(&ids)
        .bind::<SqlDate, _>(first_day(clock.today, days))
        .bind::<SqlDate, _>(clock.today)
        .load(c)
        .await?;
        Ok(Some(ChannelStats::Whatsapp {
            asked,
            data: WhatsappDays {
                channels,
                time_zone: clock.time_zone,
                today: clock.today,
                days: rows
                    .into_iter()
                    .map(|r| {
                        (r.day, DeliveryCounts { sent: r.sent, delivered: r.delivered, read: r.read, failed: r.failed })
                    })
                    .collect(),
            },
        }))
    }
    .scope_boxed()
}
