//! The report read from `conversation_rollups` and the facts still queued in
//! `conversation_facts_pending` (docs/architecture.md, "Reports") gives exactly the figures of an
//! aggregation over every fact of the period (the statement the report ran before the rollup):
//! counts, averages and nearest-rank medians and p90s, for every `group_by`, wall clock and
//! business hours, over random periods whose edges fall inside days, at midnight, or inside one
//! day; with every fact queued, every fact folded, and a mix of both while facts are added one by
//! one, labels come and go, threads and a label are deleted and the business hours change; and on
//! a database filled before the migration. A sent message's facts wait for the worker and reach
//! the rollup once it has run.

use std::collections::BTreeMap;

use adapters_postgres::reports::rollup::{fold, fold_batch};
use adapters_postgres::reports::{refigure_batch, PgReports};
use adapters_postgres::Db;
use diesel::sql_types::{BigInt, Bool, Nullable, SmallInt, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::business_hours::{BusinessHours, BusinessHoursRecord};
use domain::reports::{ConversationFacts, ConversationReport, GroupBy, ReportQuery};
use domain::workspace::WorkspaceId;
use time::macros::datetime;
use time::{Duration, OffsetDateTime};

/// Per group key (0: none) and fact kind: count, average, median, p90.
type Figures = BTreeMap<(i64, i16), (i64, Option<f64>, Option<i64>, Option<i64>)>;

const START: OffsetDateTime = datetime!(2026-06-01 00:00 UTC);

#[derive(QueryableByName)]
struct FigureRow {
    #[diesel(sql_type = BigInt)]
    key: i64,
    #[diesel(sql_type = SmallInt)]
    kind: i16,
    #[diesel(sql_type = BigInt)]
    n: i64,
    #[diesel(sql_type = Nullable<diesel::sql_types::Double>)]
    avg: Option<f64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    median: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    p90: Option<i64>,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

async fn run(conn: &mut AsyncPgConnection, sql: &str) {
    diesel::sql_query(sql).execute(conn).await.unwrap_or_else(|e| panic!("{e}: {sql}"));
}

async fn count(conn: &mut AsyncPgConnection, sql: &str) -> i64 {
    diesel::sql_query(sql).get_result::<Count>(conn).await.unwrap_or_else(|e| panic!("{e}: {sql}")).n
}

/// The figures of `query` aggregated over every fact of the period.
async fn from_facts(conn: &mut AsyncPgConnection, ws: i64, query: ReportQuery) -> Figures {
    let (key, join) = match query.group_by {
        GroupBy::None => ("0::bigint", ""),
        GroupBy::Agent => ("f.user_id", ""),
        GroupBy::Team => ("f.team_id", ""),
        GroupBy::Channel => ("f.channel_id", ""),
        GroupBy::Label => {
            ("tl.label_id", "JOIN thread_labels tl ON tl.thread_id = f.thread_id AND tl.workspace_id = $1")
        }
    };
    let sql = format!(
        "SELECT key, kind, count(*)::bigint AS n, avg(v)::float8 AS avg,
                percentile_disc(0.5) WITHIN GROUP (ORDER BY v) AS median,
                percentile_disc(0.9) WITHIN GROUP (ORDER BY v) AS p90
         FROM (SELECT {key} AS key, f.kind, CASE WHEN $4 THEN f.business_seconds ELSE f.seconds END AS v
               FROM conversation_facts f {join}
               WHERE f.workspace_id = $1 AND f.at >= $2 AND f.at < $3) x
         WHERE key IS NOT NULL
         GROUP BY key, kind"
    );
    let rows: Vec<FigureRow> = diesel::sql_query(sql)
        .bind::<BigInt, _>(ws)
        .bind::<Timestamptz, _>(query.since)
        .bind::<Timestamptz, _>(query.until)
        .bind::<Bool, _>(query.business_hours)
        .load(conn)
        .await
        .expect("figures from the facts");
    rows.into_iter().map(|r| ((r.key, r.kind), (r.n, r.avg, r.median, r.p90))).collect()
}

/// The report's figures in the same shape (kinds without any fact left out).
fn from_report(report: &ConversationReport) -> Figures {
    let mut out = Figures::new();
    for g in &report.groups {
        let key = g.key.as_ref().map_or(0, |k| k.id);
        let counts = [
            (1, g.conversations),
            (2, g.incoming_messages),
            (3, g.outgoing_messages),
            (8, g.sla.hit),
            (9, g.sla.missed),
        ];
        for (kind, n) in counts {
            if n > 0 {
                out.insert((key, kind), (n, None, None, None));
            }
        }
        for (kind, f) in [(4, g.first_response), (5, g.first_response_ai), (6, g.reply), (7, g.resolution)] {
            if f.count > 0 {
                out.insert((key, kind), (f.count, f.avg, f.median, f.p90));
            }
        }
        assert_eq!(g.resolutions, g.resolution.count);
    }
    out
}

/// A workspace with 3 channels, 30 threads (some with one or two of 3 labels) and 4,000 facts
/// of every kind over 150 days, durations from 0 s to 23 days with many ties.
async fn fill(conn: &mut AsyncPgConnection) -> i64 {
    for sql in [
        "SELECT setseed(0.32)",
        "INSERT INTO workspaces (name, slug, plan) VALUES ('Rollups', 'rollups', 'advanced')",
        "INSERT INTO channels (workspace_id, channel_type, display_name, identifier, status)
         SELECT w.id, 'whatsapp', 'Line ' || g, '+1415555010' || g, 'active' FROM workspaces w, generate_series(1, 3) g",
        "INSERT INTO contacts (workspace_id, phone)
         SELECT w.id, '+1415556' || lpad(g::text, 4, '0') FROM workspaces w, generate_series(1, 30) g",
        "INSERT INTO threads (workspace_id, contact_id, channel_id)
         SELECT c.workspace_id, c.id, (SELECT id FROM channels ORDER BY id OFFSET c.id % 3 LIMIT 1) FROM contacts c",
        "INSERT INTO labels (workspace_id, name) SELECT w.id, 'L' || g FROM workspaces w, generate_series(1, 3) g",
        "INSERT INTO thread_labels (workspace_id, thread_id, label_id)
         SELECT t.workspace_id, t.id, l.id FROM threads t, labels l WHERE (t.id + l.id) % 3 = 0 OR (t.id * l.id) % 7 = 1",
    ] {
        run(conn, sql).await;
    }
    insert_facts(conn, 4_000).await;
    count(conn, "SELECT id AS n FROM workspaces").await
}

/// Every business duration of `ws` refigured with `hours` in one statement, in the caller's
/// transaction (a change of the hours does it in batches: the same statement, a bounded range).
async fn refigure_business_time(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    hours: &domain::business_hours::BusinessHours,
) -> diesel::QueryResult<()> {
    refigure_batch(conn, ws, hours, 0, i64::MAX, i64::MAX).await.map(|_| ())
}

/// `n` random facts of the workspace's threads.
async fn insert_facts(conn: &mut AsyncPgConnection, n: i64) {
    let sql = format!(
        "INSERT INTO conversation_facts (workspace_id, thread_id, channel_id, kind, at, started_at, seconds,
                                         business_seconds, user_id, team_id)
         SELECT t.workspace_id, t.id, t.channel_id, k.kind, k.at,
                CASE WHEN k.duration THEN k.at - make_interval(secs => k.s) END,
                CASE WHEN k.duration THEN k.s END, CASE WHEN k.duration THEN floor(k.s * k.share)::bigint END,
                CASE WHEN k.kind <> 5 AND k.r1 < 0.8 THEN 1 + floor(k.r1 * 5)::bigint END,
                CASE WHEN k.r2 < 0.7 THEN 1 + floor(k.r2 * 4)::bigint END
         FROM (SELECT kind, kind IN (4, 5, 6, 7) AS duration, at, s, share, th, r1, r2 FROM (
                   SELECT g, (1 + floor(random() * 9))::smallint AS kind,
                          timestamptz '2026-06-01 00:00Z' + random() * interval '150 days' AS at,
                          floor(exp(random() * ln(2000000)))::bigint - 1 AS s,
                          CASE WHEN random() < 0.2 THEN 0 ELSE random() END AS share,
                          floor(random() * 30)::int AS th, random() AS r1, random() AS r2
                   FROM generate_series(1, {n}) g) r) k
         JOIN (SELECT t.*, row_number() OVER (ORDER BY t.id) - 1 AS rn FROM threads t) t ON t.rn = k.th"
    );
    run(conn, &sql).await;
}

/// Periods over the 150 days from `start` (a midnight) with edges inside days, on midnights,
/// across block boundaries and inside one day.
pub(crate) fn periods(start: OffsetDateTime) -> Vec<(OffsetDateTime, OffsetDateTime)> {
    let at = |days: i64, time: time::Time| (start + Duration::days(days)).replace_time(time);
    let midnight = time::Time::MIDNIGHT;
    let mut out = vec![
        (start - Duration::days(1), start + Duration::days(160)),
        (at(13, midnight), at(77, midnight)),
        (at(32, time::macros::time!(10:17:23)), at(32, time::macros::time!(19:02:01))),
        (at(32, time::macros::time!(10:17:23)), at(34, midnight)),
        (at(32, midnight), at(33, time::macros::time!(08:00))),
    ];
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    for i in 0..12 {
        let mut since = start + Duration::seconds(next(150 * 86_400) as i64);
        if i % 3 == 0 {
            since = since.date().midnight().assume_utc();
        }
        let len = if i % 4 == 1 { next(20 * 3600) + 60 } else { next(120 * 86_400) + 3600 };
        out.push((since, since + Duration::seconds(len as i64)));
    }
    out
}

/// Every period × grouping × clock: the report equals the aggregation over the facts.
async fn assert_same_figures(db: &Db, conn: &mut AsyncPgConnection, ws: i64, what: &str) {
    assert_same_figures_over(db, conn, ws, &periods(START), what).await;
}

/// Every period of `periods` × grouping × clock: the report (from the rollup and the facts still
/// queued) equals the aggregation over the facts; and the rollup is the folded facts' rollup.
pub(crate) async fn assert_same_figures_over(
    db: &Db,
    conn: &mut AsyncPgConnection,
    ws: i64,
    periods: &[(OffsetDateTime, OffsetDateTime)],
    what: &str,
) {
    let reports = PgReports::new(db.clone());
    let mut compared = 0;
    for &(since, until) in periods {
        for group_by in GroupBy::ALL {
            for business_hours in [false, true] {
                let query = ReportQuery { since, until, group_by, business_hours };
                let report = reports.report(WorkspaceId(ws), query).await.expect("report");
                let want = from_facts(conn, ws, query).await;
                assert_eq!(from_report(&report), want, "{what}: {query:?}");
                compared += want.len();
            }
        }
    }
    assert!(compared > 1_000, "{what}: only {compared} figures compared");
    // Every row's count and total, and every bucket's count, as kept and as rebuilt from the facts
    // folded so far (those not queued).
    let rebuilt = "WITH live AS (
              SELECT workspace_id, level, block, measure, dim, key, kind, -1::smallint AS bucket, n, total
              FROM conversation_rollups WHERE n <> 0 OR total <> 0
              UNION ALL
              SELECT r.workspace_id, r.level, r.block, r.measure, r.dim, r.key, r.kind, (u.i - 1)::smallint,
                     u.c::bigint, 0::bigint
              FROM conversation_rollups r, unnest(r.counts) WITH ORDINALITY u (c, i) WHERE u.c <> 0),
          per_bucket AS (
              SELECT r.workspace_id, r.level, r.block, r.measure, r.dim, r.key, r.kind, r.bucket,
                     sum(r.n)::bigint AS n, sum(r.total)::bigint AS total
              FROM conversation_facts f, LATERAL conversation_rollup_rows(
                  f.workspace_id, f.kind, f.at, f.seconds, f.business_seconds, f.user_id, f.team_id, f.channel_id,
                  ARRAY(SELECT tl.label_id FROM thread_labels tl WHERE tl.thread_id = f.thread_id), true, 1) r
              WHERE NOT EXISTS (SELECT 1 FROM conversation_facts_pending p WHERE p.fact_id = f.id)
              GROUP BY 1, 2, 3, 4, 5, 6, 7, 8),
          rebuilt AS (
              SELECT workspace_id, level, block, measure, dim, key, kind, -1::smallint, sum(n)::bigint,
                     sum(total)::bigint
              FROM per_bucket GROUP BY 1, 2, 3, 4, 5, 6, 7
              UNION ALL
              SELECT workspace_id, level, block, measure, dim, key, kind, bucket, n, 0::bigint
              FROM per_bucket WHERE bucket >= 0)
        SELECT count(*) AS n FROM ((SELECT * FROM live EXCEPT ALL SELECT * FROM rebuilt)
                                   UNION ALL (SELECT * FROM rebuilt EXCEPT ALL SELECT * FROM live)) x";
    assert_eq!(count(conn, rebuilt).await, 0, "{what}: the rollup is the facts' rollup");
    // The per-label copies are those of the folded facts with a duration, for their threads' labels.
    let label_facts = "WITH kept AS (
              SELECT workspace_id, label_id, fact_id, kind, at, seconds, business_seconds FROM conversation_label_facts),
          rebuilt AS (
              SELECT f.workspace_id, tl.label_id, f.id, f.kind, f.at, f.seconds, f.business_seconds
              FROM conversation_facts f JOIN thread_labels tl ON tl.thread_id = f.thread_id
              WHERE (f.seconds IS NOT NULL OR f.business_seconds IS NOT NULL)
                AND NOT EXISTS (SELECT 1 FROM conversation_facts_pending p WHERE p.fact_id = f.id))
        SELECT count(*) AS n FROM ((SELECT * FROM kept EXCEPT ALL SELECT * FROM rebuilt)
                                   UNION ALL (SELECT * FROM rebuilt EXCEPT ALL SELECT * FROM kept)) x";
    assert_eq!(count(conn, label_facts).await, 0, "{what}: the label copies are the folded facts'");
}

/// Business hours in Berlin whose Monday starts at `monday`.
fn berlin_hours(monday: &str) -> BusinessHours {
    BusinessHours::from_record(&BusinessHoursRecord {
        timezone: "Europe/Berlin".into(),
        days: [("mon", monday, "17:00"), ("tue", "09:00", "12:00"), ("fri", "13:00", "18:30")]
            .into_iter()
            .map(|(d, a, b)| (d.to_owned(), vec![vec![a.to_owned(), b.to_owned()]]))
            .collect(),
        holidays: vec!["2026-07-03".into()],
    })
    .expect("hours")
}

/// How many facts are queued, and how many facts there are.
async fn queued(conn: &mut AsyncPgConnection) -> (i64, i64) {
    (
        count(conn, "SELECT count(*) AS n FROM conversation_facts_pending").await,
        count(conn, "SELECT count(*) AS n FROM conversation_facts").await,
    )
}

/// Folds one batch of `n` queued facts (committed on its own, as the worker's).
async fn fold_some(conn: &mut AsyncPgConnection, n: i32) -> usize {
    fold_batch(conn, n).await.expect("fold a batch")
}

#[tokio::test]
async fn rollup_figures_equal_the_facts_figures_through_every_change() {
    let database = test_db::TestDatabase::new().await.expect("database");
    let db = Db::new(&database.url, 4, std::time::Duration::from_secs(5)).expect("pool");
    let mut conn = db.conn().await.expect("conn");
    let ws = fill(&mut conn).await;
    assert_eq!(queued(&mut conn).await, (4_000, 4_000), "new facts wait for the worker");
    assert_same_figures(&db, &mut conn, ws, "every fact queued").await;
    assert_eq!(fold_some(&mut conn, 1_500).await, 1_500);
    assert_same_figures(&db, &mut conn, ws, "some facts folded").await;
    assert_eq!(fold(&db).await.expect("fold"), 2_500);
    assert_eq!(queued(&mut conn).await.0, 0);
    assert_same_figures(&db, &mut conn, ws, "every fact folded").await;

    // Facts one statement at a time (the live path), some folded and some still queued when
    // labels are added and taken away, threads and a label deleted (their cascades) and the
    // business hours change (every business duration refigured).
    for i in 0..60 {
        insert_facts(&mut conn, 1).await;
        if i == 29 {
            fold_some(&mut conn, 20).await;
        }
    }
    let labels = [
        "INSERT INTO thread_labels (workspace_id, thread_id, label_id)
         SELECT t.workspace_id, t.id, l.id FROM threads t, labels l WHERE t.id % 5 = 0 ON CONFLICT DO NOTHING",
        "DELETE FROM thread_labels WHERE thread_id % 4 = 1",
        "DELETE FROM threads WHERE id IN (SELECT id FROM threads ORDER BY id LIMIT 2)",
        "DELETE FROM labels WHERE id = (SELECT min(id) FROM labels)",
    ];
    for sql in labels {
        run(&mut conn, sql).await;
        insert_facts(&mut conn, 3).await;
    }
    let (pending, _) = queued(&mut conn).await;
    assert!(pending > 20, "some facts are still queued: {pending}");
    refigure_business_time(&mut conn, WorkspaceId(ws), &berlin_hours("09:00")).await.expect("refigure");
    refigure_business_time(&mut conn, WorkspaceId(ws), &berlin_hours("10:30")).await.expect("refigure");
    assert_same_figures(&db, &mut conn, ws, "changed, some facts queued").await;
    fold(&db).await.expect("fold");
    assert_eq!(queued(&mut conn).await.0, 0);
    assert_same_figures(&db, &mut conn, ws, "changed, every fact folded").await;
}

/// Two workers folding one queue at once each take their own facts: every fact is folded once.
#[tokio::test]
async fn workers_running_at_once_fold_every_fact_once() {
    let database = test_db::TestDatabase::new().await.expect("database");
    let db = Db::new(&database.url, 4, std::time::Duration::from_secs(5)).expect("pool");
    let mut conn = db.conn().await.expect("conn");
    let ws = fill(&mut conn).await;
    insert_facts(&mut conn, 16_000).await;
    let (a, b) = tokio::join!(fold(&db), fold(&db));
    assert_eq!(a.expect("a") + b.expect("b"), 20_000);
    assert_eq!(queued(&mut conn).await.0, 0);
    assert_same_figures(&db, &mut conn, ws, "folded by two workers").await;
}

/// The worker, new facts, label changes (each thread locked first, as `PUT` of a thread's labels
/// does) and refigurings of the business hours at once, each in transactions of its own: none
/// deadlocks or fails, and the rollup ends exact.
#[tokio::test]
async fn the_worker_new_facts_label_changes_and_refigurings_at_once_stay_exact() {
    let database = test_db::TestDatabase::new().await.expect("database");
    let db = Db::new(&database.url, 8, std::time::Duration::from_secs(30)).expect("pool");
    let mut conn = db.conn().await.expect("conn");
    let ws = fill(&mut conn).await;
    fold_some(&mut conn, 2_000).await;
    let worker = async {
        let mut c = db.conn().await.expect("conn");
        for _ in 0..60 {
            c.transaction::<_, diesel::result::Error, _>(|c| fold_batch(c, 100).scope_boxed()).await.expect("a batch");
        }
    };
    let sends = async {
        let mut c = db.conn().await.expect("conn");
        for _ in 0..40 {
            insert_facts(&mut c, 10).await;
        }
    };
    let labels = async {
        let mut c = db.conn().await.expect("conn");
        for i in 0..30 {
            let thread = format!("(SELECT id FROM threads ORDER BY id OFFSET {} LIMIT 1)", i % 30);
            c.transaction::<_, diesel::result::Error, _>(|c| {
                async move {
                    for sql in [
                        format!("SELECT 1 FROM threads WHERE id = {thread} FOR UPDATE"),
                        format!("DELETE FROM thread_labels WHERE thread_id = {thread} AND label_id % 2 = {}", i % 2),
                        format!(
                            "INSERT INTO thread_labels (workspace_id, thread_id, label_id)
                             SELECT t.workspace_id, t.id, l.id FROM threads t, labels l
                             WHERE t.id = {thread} AND l.id % 2 <> {} ON CONFLICT DO NOTHING",
                            i % 2
                        ),
                    ] {
                        diesel::sql_query(sql).execute(c).await?;
                    }
                    Ok(())
                }
                .scope_boxed()
            })
            .await
            .expect("a label change");
        }
    };
    let hours = async {
        let mut c = db.conn().await.expect("conn");
        for monday in ["08:00", "11:00", "09:30"] {
            let hours = berlin_hours(monday);
            c.transaction::<_, diesel::result::Error, _>(|c| {
                async move { refigure_business_time(c, WorkspaceId(ws), &hours).await }.scope_boxed()
            })
            .await
            .expect("a refiguring");
        }
    };
    tokio::join!(worker, sends, labels, hours);
    fold(&db).await.expect("fold");
    assert_eq!(queued(&mut conn).await.0, 0);
    assert_same_figures(&db, &mut conn, ws, "after concurrent changes").await;
}

#[tokio::test]
async fn facts_stored_before_the_rollup_are_queued_by_the_migration_and_folded() {
    let database = test_db::TestDatabase::new().await.expect("database");
    crate::helpers::revert_through(&database.url, "20261130000101").await;
    let db = Db::new(&database.url, 4, std::time::Duration::from_secs(5)).expect("pool");
    let mut conn = db.conn().await.expect("conn");
    let ws = fill(&mut conn).await;
    adapters_postgres::migrate::run_pending(&database.url).await.expect("migrate");
    assert_eq!(queued(&mut conn).await, (4_000, 4_000), "the migration queues every fact");
    assert_same_figures(&db, &mut conn, ws, "upgraded, queued").await;
    assert_eq!(fold(&db).await.expect("fold"), 4_000);
    assert!(count(&mut conn, "SELECT count(*) AS n FROM conversation_rollups").await > 1_000);
    assert_same_figures(&db, &mut conn, ws, "upgraded, folded").await;
}

/// A send commits its facts queued, not folded (the send writes no rollup row); the worker's pass
/// folds them and empties the queue, and the report says the same before and after.
#[tokio::test]
async fn a_sends_facts_wait_for_the_worker_and_reach_the_rollup_after_commit() {
    let app = crate::helpers::TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550100", "active").await;
    let ana = "+4915100000001";
    app.contact_wrote_at(ch, ana, OffsetDateTime::now_utc() - Duration::hours(3)).await;
    crate::reports::reply(&app, &key, ch, ana, serde_json::json!({"type": "user", "id": ws.admin_id})).await;
    let db = Db::new(&app.database.url, 2, std::time::Duration::from_secs(5)).expect("pool");
    let mut conn = db.conn().await.expect("conn");
    let (pending, facts) = queued(&mut conn).await;
    assert!(facts >= 4 && pending == facts, "{pending} of {facts} facts queued");
    assert_eq!(count(&mut conn, "SELECT count(*) AS n FROM conversation_rollups").await, 0);
    let query = ReportQuery {
        since: OffsetDateTime::now_utc() - Duration::days(3),
        until: OffsetDateTime::now_utc() + Duration::days(1),
        group_by: GroupBy::Agent,
        business_hours: false,
    };
    let reports = PgReports::new(db.clone());
    let before = from_report(&reports.report(WorkspaceId(ws.id), query).await.expect("report"));
    assert_eq!(app::report_rollup::run_once(&db).await.expect("pass"), usize::try_from(facts).expect("count"));
    assert_eq!(queued(&mut conn).await.0, 0);
    let folded = count(
        &mut conn,
        "SELECT coalesce(sum(n), 0)::bigint AS n FROM conversation_rollups WHERE level = 0 AND measure = 0 AND dim = 0",
    )
    .await;
    assert_eq!(folded, facts);
    let after = from_report(&reports.report(WorkspaceId(ws.id), query).await.expect("report"));
    assert_eq!(after, before);
    assert_eq!(after, from_facts(&mut conn, ws.id, query).await);
    assert!(!after.is_empty());
}
