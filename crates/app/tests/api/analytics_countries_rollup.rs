//! The top-countries export reads the `country_day_stats` summary (or, when a contact was active
//! after the period, the `contact_day_stats` rollup): its figures equal a direct computation over
//! the messages, on a filled workspace, after the changes that move them (status updates, deletes,
//! a contact's country, contacts deleted, new messages, the time zone), after the migrations'
//! backfills, and on a database filled before the summary's migration.

use adapters_postgres::analytics::PgCountryStats;
use diesel::sql_types::{Array, BigInt, Date as SqlDate, Nullable, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use domain::analytics::{CountryStats, TopCountries};
use domain::channels::ChannelId;
use domain::workspace::WorkspaceId;
use time::OffsetDateTime;

use crate::helpers::TestApp;

#[derive(QueryableByName, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Figures {
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

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// The figures straight from `messages` (the export's query before the rollup).
async fn direct(app: &TestApp, ws: i64, channels: &[i64], t: &TopCountries) -> Vec<Figures> {
    let mut conn = app.db.conn().await.expect("conn");
    let mut rows: Vec<Figures> = diesel::sql_query(
        "SELECT upper(nullif(btrim(ct.country), '')) AS country,
                count(DISTINCT ct.id)::bigint AS contacts,
                count(*) FILTER (WHERE m.direction = 'inbound')::bigint AS inbound,
                count(*) FILTER (WHERE m.direction = 'outbound' AND m.status IN ('sent', 'delivered', 'read'))::bigint AS sent,
                count(*) FILTER (WHERE m.direction = 'outbound' AND m.status IN ('delivered', 'read'))::bigint AS delivered,
                count(*) FILTER (WHERE m.direction = 'outbound' AND m.status = 'read')::bigint AS read,
                count(*) FILTER (WHERE m.direction = 'outbound' AND m.status = 'failed')::bigint AS failed
         FROM messages m
         JOIN threads t ON t.id = m.thread_id AND t.workspace_id = m.workspace_id
         JOIN contacts ct ON ct.id = t.contact_id AND ct.workspace_id = m.workspace_id
         WHERE m.workspace_id = $1 AND m.channel_id = ANY($2)
           AND m.created_at >= ($3::timestamp AT TIME ZONE $5)
           AND m.created_at < (($4::date + 1)::timestamp AT TIME ZONE $5)
         GROUP BY 1",
    )
    .bind::<BigInt, _>(ws)
    .bind::<Array<BigInt>, _>(channels)
    .bind::<SqlDate, _>(t.from)
    .bind::<SqlDate, _>(t.to)
    .bind::<Text, _>(&t.time_zone)
    .load(&mut conn)
    .await
    .expect("direct");
    rows.sort();
    rows
}

fn exported(t: &TopCountries) -> Vec<Figures> {
    let mut rows: Vec<Figures> = t
        .rows
        .iter()
        .map(|r| Figures {
            country: r.country.clone(),
            contacts: r.contacts,
            inbound: r.inbound,
            sent: r.outbound.sent,
            delivered: r.outbound.delivered,
            read: r.outbound.read,
            failed: r.outbound.failed,
        })
        .collect();
    rows.sort();
    rows
}

async fn ids(app: &TestApp, sql: &str) -> Vec<i64> {
    let mut conn = app.db.conn().await.expect("conn");
    let rows: Vec<Id> = diesel::sql_query(sql).load(&mut conn).await.expect("ids");
    rows.into_iter().map(|r| r.id).collect()
}

async fn run(app: &TestApp, sql: &str) {
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query(sql).execute(&mut conn).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Whether a contact of the workspace was active after today (then the export reads the rows of
/// each contact and day instead of the summary).
async fn active_after_today(app: &TestApp, ws: i64) -> bool {
    !ids(
        app,
        &format!(
            "SELECT 1::bigint AS id FROM country_day_stats s JOIN workspaces w ON w.id = s.workspace_id
             WHERE s.workspace_id = {ws} AND s.contacts > 0 AND s.day > (now() AT TIME ZONE w.time_zone)::date"
        ),
    )
    .await
    .is_empty()
}

/// Every selection the export offers (all WhatsApp channels, or each channel; 7, 30 and 90 days)
/// gives the direct computation's figures.
async fn assert_exact(app: &TestApp, ws: i64, what: &str) {
    let stats = PgCountryStats::new(app.db.clone());
    let now = OffsetDateTime::now_utc();
    let whatsapp = ids(
        app,
        &format!("SELECT id FROM channels WHERE workspace_id = {ws} AND channel_type = 'whatsapp' ORDER BY id"),
    )
    .await;
    let every = ids(app, &format!("SELECT id FROM channels WHERE workspace_id = {ws} ORDER BY id")).await;
    let mut selections: Vec<(Option<i64>, Vec<i64>)> = vec![(None, whatsapp)];
    selections.extend(every.into_iter().map(|c| (Some(c), vec![c])));
    let mut compared = 0;
    for (channel, channels) in selections {
        for days in [7u16, 30, 90] {
            let t = stats
                .top_countries(WorkspaceId(ws), channel.map(ChannelId), days, now)
                .await
                .expect("top countries")
                .expect("channel exists");
            let want = direct(app, ws, &channels, &t).await;
            assert_eq!(exported(&t), want, "{what}: channel {channel:?}, {days} days");
            compared += want.len();
        }
    }
    assert!(compared > 20, "{what}: a filled workspace has figures to compare ({compared} rows)");
}

#[tokio::test]
async fn the_rollup_gives_exactly_the_figures_of_the_messages_through_every_change() {
    let app = TestApp::spawn().await;
    let cipher = app::secrets::cipher(&app.settings, &app.db, false).await.expect("cipher");
    let ws = app::commands::seed_demo(&app.db, cipher.as_ref(), None).await.expect("seed").workspace_id;
    assert!(!active_after_today(&app, ws).await, "the demo's messages are all in the past: the summary is read");
    assert_exact(&app, ws, "seeded").await;

    // Statuses move on (a campaign's callbacks), messages are deleted.
    run(&app, &format!(
        "UPDATE messages SET status = CASE status WHEN 'sent' THEN 'delivered' WHEN 'delivered' THEN 'read' ELSE 'failed' END
         WHERE workspace_id = {ws} AND direction = 'outbound' AND id % 3 = 0"
    ))
    .await;
    run(&app, &format!("DELETE FROM messages WHERE workspace_id = {ws} AND id % 17 = 0")).await;
    assert_exact(&app, ws, "statuses and deletes").await;

    // A contact's country changes, another's is cleared (as erasure does).
    run(
        &app,
        &format!(
            "UPDATE contacts SET country = CASE WHEN id % 3 = 0 THEN NULL WHEN id % 3 = 1 THEN 'FR' ELSE 'JP' END
         WHERE workspace_id = {ws} AND id IN (SELECT id FROM contacts WHERE workspace_id = {ws} ORDER BY id LIMIT 30)"
        ),
    )
    .await;
    assert_exact(&app, ws, "countries").await;

    // Every message of some contacts goes, then a few contacts with all they had.
    run(
        &app,
        &format!(
            "DELETE FROM messages WHERE workspace_id = {ws}
         AND thread_id IN (SELECT id FROM threads WHERE contact_id IN
                           (SELECT id FROM contacts WHERE workspace_id = {ws} ORDER BY id DESC LIMIT 5))"
        ),
    )
    .await;
    run(&app, &format!(
        "DELETE FROM contacts WHERE id IN (SELECT id FROM contacts WHERE workspace_id = {ws} ORDER BY id DESC LIMIT 3 OFFSET 5)"
    ))
    .await;
    assert_exact(&app, ws, "contacts emptied and deleted").await;

    // New messages, some right now and some around midnight in the workspace's time zone, then
    // the time zone changes (every day moves).
    run(
        &app,
        &format!(
            "INSERT INTO messages (workspace_id, thread_id, channel_id, direction, sender_kind, author_user_id,
                               author_ai_agent_id, template, content, status, queued_at, sent_at, delivered_at,
                               read_at, failed_at, failure_reason, created_at, updated_at)
         SELECT m.workspace_id, m.thread_id, m.channel_id, m.direction, m.sender_kind, m.author_user_id,
                m.author_ai_agent_id, m.template, 'again', m.status, m.queued_at, m.sent_at, m.delivered_at,
                m.read_at, m.failed_at, m.failure_reason, now() - (g || ' hours')::interval, now()
         FROM (SELECT * FROM messages WHERE workspace_id = {ws} ORDER BY id LIMIT 40) m, generate_series(0, 30, 6) g"
        ),
    )
    .await;
    assert_exact(&app, ws, "new messages").await;
    run(&app, &format!("UPDATE workspaces SET time_zone = 'Pacific/Kiritimati' WHERE id = {ws}")).await;
    assert_exact(&app, ws, "time zone").await;

    // The migrations' backfills (what they run for every workspace) give the same figures: the
    // rollup's through the summary's triggers, then the summary's own.
    run(&app, "TRUNCATE contact_day_stats, country_day_stats, contact_activity").await;
    run(&app, "SELECT contact_day_stats_rebuild(id) FROM workspaces").await;
    assert_exact(&app, ws, "rollup backfilled").await;
    run(&app, "TRUNCATE country_day_stats, contact_activity").await;
    run(&app, "SELECT country_day_stats_rebuild(id) FROM workspaces").await;
    assert_exact(&app, ws, "summary backfilled").await;

    // A message dated tomorrow: its contact's latest day is after every period, so the export
    // reads the rows of each contact and day, and stays exact.
    run(
        &app,
        &format!(
            "INSERT INTO messages (workspace_id, thread_id, channel_id, direction, sender_kind, content, status, created_at)
             SELECT workspace_id, thread_id, channel_id, 'inbound', 'contact', 'tomorrow', 'delivered', now() + interval '1 day 2 hours'
             FROM messages WHERE workspace_id = {ws} ORDER BY id LIMIT 1"
        ),
    )
    .await;
    assert!(active_after_today(&app, ws).await);
    assert_exact(&app, ws, "a message dated tomorrow").await;
}

#[tokio::test]
async fn the_summary_migration_fills_it_from_a_workspace_filled_before_it() {
    let app = TestApp::spawn().await;
    let cipher = app::secrets::cipher(&app.settings, &app.db, false).await.expect("cipher");
    let ws = app::commands::seed_demo(&app.db, cipher.as_ref(), None).await.expect("seed").workspace_id;
    // Back to the schema before the summary (reverting whatever came after it too), where the
    // workspace goes on changing: statuses, countries, new messages.
    let url = app.database.url.clone();
    crate::helpers::revert_through(&url, "20261127000601").await;
    run(
        &app,
        &format!(
            "UPDATE messages SET status = 'read' WHERE workspace_id = {ws} AND direction = 'outbound' AND id % 4 = 0"
        ),
    )
    .await;
    run(
        &app,
        &format!(
            "UPDATE contacts SET country = CASE WHEN id % 2 = 0 THEN NULL ELSE 'NZ' END
         WHERE id IN (SELECT id FROM contacts WHERE workspace_id = {ws} ORDER BY id LIMIT 20)"
        ),
    )
    .await;
    run(&app, &format!(
        "INSERT INTO messages (workspace_id, thread_id, channel_id, direction, sender_kind, content, status, created_at)
         SELECT workspace_id, thread_id, channel_id, 'inbound', 'contact', 'before the summary', 'delivered', now() - interval '3 hours'
         FROM messages WHERE workspace_id = {ws} AND id % 9 = 0"
    ))
    .await;

    adapters_postgres::migrate::run_pending(&url).await.expect("migrate again");
    assert!(!active_after_today(&app, ws).await);
    assert_exact(&app, ws, "filled before the summary's migration").await;
}

#[tokio::test]
async fn the_top_countries_csv_is_served_from_the_summary() {
    let app = TestApp::spawn().await;
    let cipher = app::secrets::cipher(&app.settings, &app.db, false).await.expect("cipher");
    let creds = app::commands::seed_demo(&app.db, cipher.as_ref(), None).await.expect("seed");
    // With the summary emptied, the export says nothing: it reads neither the messages nor the
    // rows of each contact and day.
    run(&app, "TRUNCATE country_day_stats, contact_activity").await;
    let stats = PgCountryStats::new(app.db.clone());
    let t = stats
        .top_countries(WorkspaceId(creds.workspace_id), None, 90, OffsetDateTime::now_utc())
        .await
        .expect("top countries")
        .expect("workspace");
    assert!(t.rows.is_empty(), "{:?}", t.rows);
}
