//! The top-countries export reads the `contact_day_stats` rollup: its figures equal a direct
//! computation over the messages, on a filled workspace, after the changes that move them (status
//! updates, a contact's country, new messages, the time zone), and after the migration's backfill.

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

    // The migration's backfill (what it runs for every workspace) gives the same rows.
    run(&app, "TRUNCATE contact_day_stats").await;
    run(&app, "SELECT contact_day_stats_rebuild(id) FROM workspaces").await;
    assert_exact(&app, ws, "backfilled").await;
}

#[tokio::test]
async fn the_top_countries_csv_is_served_from_the_rollup() {
    let app = TestApp::spawn().await;
    let cipher = app::secrets::cipher(&app.settings, &app.db, false).await.expect("cipher");
    let creds = app::commands::seed_demo(&app.db, cipher.as_ref(), None).await.expect("seed");
    // With the rollup emptied, the export says nothing: it does not read the messages.
    run(&app, "TRUNCATE contact_day_stats").await;
    let stats = PgCountryStats::new(app.db.clone());
    let t = stats
        .top_countries(WorkspaceId(creds.workspace_id), None, 90, OffsetDateTime::now_utc())
        .await
        .expect("top countries")
        .expect("workspace");
    assert!(t.rows.is_empty(), "{:?}", t.rows);
}
