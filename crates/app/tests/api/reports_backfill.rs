//! The reports of history stored without figures (`adapters_postgres::reports::backfill`):
//! conversations recorded live, their figures forgotten and the threads noted as an upgrade notes
//! them, give the same report once replayed, for every grouping, with and without business hours;
//! a second run, or two at once, count nothing twice; and on a database filled before the reports'
//! migration, the migration notes the threads and the replay gives the figures a hand computation
//! gives.

use adapters_postgres::reports::backfill;
use adapters_postgres::Db;
use diesel::sql_types::BigInt;
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use domain::workspace::WorkspaceId;
use reqwest::Method;
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

use crate::assistant_helpers::{exec, sql_json};
use crate::credentials::add_member;
use crate::helpers::TestApp;

const GROUPINGS: [&str; 5] = ["none", "agent", "team", "label", "channel"];

async fn reply(app: &TestApp, key: &str, channel: i64, to: &str, sender: Value) {
    let body = json!({"channel_id": channel, "to": to, "content": "On it", "sender": sender});
    let res = app.post_json("/v1/messages", key, &body).await;
    assert_eq!(res.status(), 201, "reply");
}

fn urlencode(s: &str) -> String {
    s.replace('+', "%2B").replace(':', "%3A")
}

/// Every grouping's report, with and without business hours.
async fn reports(app: &TestApp, key: &str, period: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for grouping in GROUPINGS {
        for business in [false, true] {
            let q = format!("/v1/reports/conversations?{period}&group_by={grouping}&business_hours={business}");
            let (status, body) = app.get_json(&q, key).await;
            assert_eq!(status, 200, "{q}: {body}");
            out.push(body);
        }
    }
    out
}

/// `got` equals `want`, but for the resolution durations: the live path times a resolution when
/// the status is written, the replay when its event is, a few microseconds apart, which may
/// straddle a whole second.
fn same_figures(got: &[Value], want: &[Value]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        let (mut g, mut w) = (g.clone(), w.clone());
        for (a, b) in
            g["groups"].as_array_mut().expect("groups").iter_mut().zip(w["groups"].as_array_mut().expect("groups"))
        {
            for part in ["avg", "median", "p90"] {
                let (x, y) = (a["resolution"][part].as_f64(), b["resolution"][part].as_f64());
                match (x, y) {
                    (Some(x), Some(y)) => assert!((x - y).abs() <= 1.0, "resolution {part}: {x} vs {y}"),
                    (x, y) => assert_eq!(x, y, "resolution {part}"),
                }
                a["resolution"][part] = Value::Null;
                b["resolution"][part] = Value::Null;
            }
        }
        assert_eq!(g, w);
    }
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

async fn count(db: &Db, sql: &str, ws: i64) -> i64 {
    let mut conn = db.conn().await.expect("conn");
    diesel::sql_query(sql)
        .bind::<BigInt, _>(ws)
        .get_result::<Count>(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{e}: {sql}"))
        .n
}

/// Forgets the figures of `ws` and notes its threads as the upgrade does.
async fn forget(app: &TestApp, ws: i64) {
    exec(app, "DELETE FROM conversation_facts WHERE workspace_id = $1", ws).await;
    exec(app, "DELETE FROM conversation_cycles WHERE workspace_id = $1", ws).await;
    let mut conn = app.db.conn().await.expect("conn");
    backfill::note_workspace(&mut conn, WorkspaceId(ws)).await.expect("note");
}

#[tokio::test]
async fn a_replayed_history_gives_the_report_the_live_path_recorded() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550100", "active").await;
    let (member_email, _) = add_member(&app, ws.id, "agent").await;
    let member = sql_json(
        &app,
        &format!("SELECT json_build_object('id', id)::text AS j FROM users WHERE email = '{member_email}' AND $1 = $1"),
        ws.id,
    )
    .await["id"]
        .as_i64()
        .expect("member");
    let bot = sql_json(
        &app,
        "WITH a AS (INSERT INTO ai_agents (workspace_id, name, status) VALUES ($1, 'Bot', 'active') RETURNING id)
         SELECT json_build_object('id', id)::text AS j FROM a",
        ws.id,
    )
    .await["id"]
        .as_i64()
        .expect("bot");
    let (ana, ben) = ("+4915100000001", "+4915100000002");
    let now = OffsetDateTime::now_utc();

    // Ana: two messages, the bot and the admin answer, resolved, she writes again (a new cycle),
    // the admin answers. Ben: the member answers, labelled `vip`.
    app.contact_wrote_at(ch, ana, now - Duration::hours(4)).await;
    app.contact_wrote_at(ch, ana, now - Duration::hours(3)).await;
    reply(&app, &key, ch, ana, json!({"type": "ai_agent", "id": bot})).await;
    reply(&app, &key, ch, ana, json!({"type": "user", "id": ws.admin_id})).await;
    let ana_thread =
        sql_json(&app, "SELECT json_agg(id ORDER BY id)::text AS j FROM threads WHERE workspace_id = $1", ws.id).await
            [0]
        .as_i64()
        .expect("thread");
    let res = app
        .authed(Method::PATCH, &format!("/v1/threads/{ana_thread}"), &key)
        .json(&json!({"status": "resolved"}))
        .send()
        .await
        .expect("resolve");
    assert_eq!(res.status(), 200);
    app.contact_wrote(ch, ana).await;
    reply(&app, &key, ch, ana, json!({"type": "user", "id": ws.admin_id})).await;
    app.contact_wrote_at(ch, ben, now - Duration::hours(2)).await;
    reply(&app, &key, ch, ben, json!({"type": "user", "id": member})).await;
    let ben_thread =
        sql_json(&app, "SELECT json_agg(id ORDER BY id)::text AS j FROM threads WHERE workspace_id = $1", ws.id).await
            [1]
        .as_i64()
        .expect("ben");
    assert_eq!(app.post_json("/v1/labels", &key, &json!({"name": "vip"})).await.status(), 201);
    let res = app
        .authed(Method::PUT, &format!("/v1/threads/{ben_thread}/labels"), &key)
        .json(&json!({"labels": ["vip"]}))
        .send()
        .await
        .expect("labels");
    assert_eq!(res.status(), 200);
    let hours = json!({"timezone": "UTC", "days": {"mon": [["09:00", "17:00"]], "tue": [["09:00", "17:00"]],
        "wed": [["09:00", "17:00"]], "thu": [["09:00", "17:00"]], "fri": [["09:00", "12:00"], ["13:00", "17:00"]]}});
    let res = app.authed(Method::PUT, "/v1/business-hours", &key).json(&hours).send().await.expect("hours");
    assert_eq!(res.status(), 200);

    let since = urlencode(&(now - Duration::days(1)).format(&Rfc3339).expect("since"));
    let until = urlencode(&(now + Duration::hours(1)).format(&Rfc3339).expect("until"));
    let period = format!("since={since}&until={until}");
    let live = reports(&app, &key, &period).await;
    assert_eq!(live[0]["groups"][0]["conversations"], 3, "the live figures: {}", live[0]);
    assert_eq!(live[0]["groups"][0]["resolutions"], 1);
    let facts = "SELECT count(*) AS n FROM conversation_facts WHERE workspace_id = $1";
    let live_facts = count(&app.db, facts, ws.id).await;

    forget(&app, ws.id).await;
    assert_eq!(count(&app.db, facts, ws.id).await, 0);
    assert_eq!(backfill::run(&app.db, Some(WorkspaceId(ws.id))).await.expect("backfill"), 2);
    let replayed = reports(&app, &key, &period).await;
    same_figures(&replayed, &live);
    assert_eq!(count(&app.db, facts, ws.id).await, live_facts);
    let cycles = "SELECT count(*) AS n FROM conversation_cycles WHERE workspace_id = $1";
    assert_eq!(count(&app.db, cycles, ws.id).await, 2);

    // Again: nothing is left to replay, nothing counts twice.
    assert_eq!(backfill::run(&app.db, None).await.expect("again"), 0);
    assert_eq!(reports(&app, &key, &period).await, replayed);

    // Two instances at once share the threads.
    forget(&app, ws.id).await;
    let (a, b) = tokio::join!(backfill::run(&app.db, None), backfill::run(&app.db, None));
    assert_eq!(a.expect("a") + b.expect("b"), 2);
    assert_eq!(reports(&app, &key, &period).await, replayed);

    // Live traffic after the threads were noted is recorded live and never replayed: Ben writes
    // again before his thread's turn comes, the member answers.
    forget(&app, ws.id).await;
    app.contact_wrote(ch, ben).await;
    reply(&app, &key, ch, ben, json!({"type": "user", "id": member})).await;
    assert_eq!(backfill::run(&app.db, None).await.expect("with live traffic"), 2);
    let after = reports(&app, &key, &period).await;
    let g = &after[0]["groups"][0];
    assert_eq!((g["incoming_messages"].as_i64(), g["outgoing_messages"].as_i64()), (Some(5), Some(5)), "{g}");
    assert_eq!(g["conversations"], 4, "the live path found no cycle: Ben's message started one");
}

#[derive(QueryableByName, Debug, PartialEq, Eq)]
struct FactRow {
    #[diesel(sql_type = diesel::sql_types::SmallInt)]
    kind: i16,
    #[diesel(sql_type = diesel::sql_types::Nullable<BigInt>)]
    seconds: Option<i64>,
    #[diesel(sql_type = diesel::sql_types::Nullable<BigInt>)]
    user_id: Option<i64>,
}

async fn facts_of(conn: &mut diesel_async::AsyncPgConnection) -> Vec<FactRow> {
    diesel::sql_query("SELECT kind, seconds, user_id FROM conversation_facts ORDER BY thread_id, at, kind")
        .load(conn)
        .await
        .expect("facts")
}

#[tokio::test]
async fn threads_stored_before_the_reports_are_replayed_once_after_the_upgrade() {
    const VERSION: &str = "20261127000102";
    let database = test_db::TestDatabase::new().await.expect("database");
    crate::helpers::revert_through(&database.url, VERSION).await;
    let db = Db::new(&database.url, 4, std::time::Duration::from_secs(5)).expect("pool");
    let mut conn = db.conn().await.expect("conn");
    // Two threads: one answered by a person and resolved (no status change recorded: it happened
    // before the events were kept), one answered by an AI agent and open.
    for sql in [
        "INSERT INTO workspaces (name, slug, plan) VALUES ('Old', 'old', 'advanced')",
        "INSERT INTO users (email, name, password_hash) VALUES ('agent@old.test', 'Agent', 'x')",
        "INSERT INTO workspace_members (workspace_id, user_id, role, status)
         SELECT w.id, u.id, 'agent', 'active' FROM workspaces w, users u",
        "INSERT INTO channels (workspace_id, channel_type, display_name, identifier, status)
         SELECT id, 'whatsapp', 'Old', '+14155550100', 'active' FROM workspaces",
        "INSERT INTO contacts (workspace_id, phone) SELECT id, '+14155550199' FROM workspaces",
        "INSERT INTO ai_agents (workspace_id, name, status) SELECT id, 'Bot', 'active' FROM workspaces",
        "INSERT INTO threads (workspace_id, contact_id, channel_id, status, updated_at, assignee_type, assignee_user_id)
         SELECT w.id, c.id, ch.id, 'resolved', '2026-11-02 10:10:00+00', 'user', u.id
         FROM workspaces w, contacts c, channels ch, users u",
        "INSERT INTO threads (workspace_id, contact_id, channel_id, status, updated_at)
         SELECT w.id, c.id, ch.id, 'open', '2026-11-03 09:00:30+00' FROM workspaces w, contacts c, channels ch",
        "INSERT INTO messages (workspace_id, thread_id, channel_id, direction, sender_kind, sender_type, sender_id,
                               content, status, created_at, updated_at)
         SELECT t.workspace_id, t.id, t.channel_id, m.direction, m.kind, m.sender_type,
                CASE m.sender_type WHEN 'user' THEN (SELECT id FROM users) WHEN 'ai_agent' THEN (SELECT id FROM ai_agents)
                                   ELSE t.contact_id END,
                'hi', 'delivered', m.at::timestamptz, m.at::timestamptz
         FROM threads t
         JOIN (VALUES ('resolved', 'inbound', 'contact', 'contact', '2026-11-02 10:00:00+00'),
                      ('resolved', 'inbound', 'contact', 'contact', '2026-11-02 10:01:00+00'),
                      ('resolved', 'outbound', 'human', 'user', '2026-11-02 10:05:00+00'),
                      ('open', 'inbound', 'contact', 'contact', '2026-11-03 09:00:00+00'),
                      ('open', 'outbound', 'ai', 'ai_agent', '2026-11-03 09:00:30+00'))
              AS m (status, direction, kind, sender_type, at) ON m.status = t.status
         ORDER BY m.at",
    ] {
        diesel::sql_query(sql).execute(&mut conn).await.unwrap_or_else(|e| panic!("{e}: {sql}"));
    }
    adapters_postgres::migrate::run_pending(&database.url).await.expect("migrate");
    let noted = "SELECT count(*) AS n FROM conversation_backfill WHERE $1 = $1";
    assert_eq!(count(&db, noted, 0).await, 2, "the migration notes each thread with messages");
    assert_eq!(count(&db, "SELECT count(*) AS n FROM conversation_facts WHERE $1 = $1", 0).await, 0);

    assert_eq!(backfill::run(&db, None).await.expect("backfill"), 2);
    let user = count(&db, "SELECT id AS n FROM users WHERE $1 = $1", 0).await;
    let f = |kind: i16, seconds: Option<i64>, user_id: Option<i64>| FactRow { kind, seconds, user_id };
    let want = vec![
        // conversation, incoming (the thread's assignee), incoming, outgoing, first response and
        // reply (from the first of the run), resolution after the last message.
        f(1, None, Some(user)),
        f(2, None, Some(user)),
        f(2, None, Some(user)),
        f(3, None, Some(user)),
        f(4, Some(300), Some(user)),
        f(6, Some(300), Some(user)),
        f(7, Some(600), Some(user)),
        // conversation, incoming, outgoing, first AI response, reply: no member's.
        f(1, None, None),
        f(2, None, None),
        f(3, None, None),
        f(5, Some(30), None),
        f(6, Some(30), None),
    ];
    assert_eq!(facts_of(&mut conn).await, want);
    assert_eq!(count(&db, noted, 0).await, 0);
    assert_eq!(backfill::run(&db, None).await.expect("again"), 0);
    assert_eq!(facts_of(&mut conn).await, want, "a second run adds nothing");
    let open = "SELECT count(*) AS n FROM conversation_cycles WHERE awaiting_since IS NULL AND $1 = $1";
    assert_eq!(count(&db, open, 0).await, 2, "both cycles are stored, nothing awaits a reply");

    crate::helpers::revert_through(&database.url, VERSION).await;
    adapters_postgres::migrate::run_pending(&database.url).await.expect("migrate again");
}

#[derive(QueryableByName)]
struct Seconds {
    #[diesel(sql_type = diesel::sql_types::Nullable<BigInt>)]
    seconds: Option<i64>,
    #[diesel(sql_type = diesel::sql_types::Nullable<BigInt>)]
    business_seconds: Option<i64>,
}

/// Figures stored with the earlier rounding (business seconds from instants cut to milliseconds:
/// 10 where the wall clock says 9) are refigured after the upgrade, in the background, to the
/// wall-clock seconds where every moment counts.
#[tokio::test]
async fn business_seconds_stored_with_the_old_rounding_are_refigured_after_the_upgrade() {
    let database = test_db::TestDatabase::new().await.expect("database");
    crate::helpers::revert_through(&database.url, "20261205000101").await;
    let db = Db::new(&database.url, 2, std::time::Duration::from_secs(5)).expect("pool");
    let mut conn = db.conn().await.expect("conn");
    for sql in [
        "INSERT INTO workspaces (name, slug, plan) VALUES ('Old', 'old', 'advanced')",
        "INSERT INTO channels (workspace_id, channel_type, display_name, identifier, status)
         SELECT id, 'whatsapp', 'Old', '+14155550100', 'active' FROM workspaces",
        "INSERT INTO contacts (workspace_id, phone) SELECT id, '+14155550199' FROM workspaces",
        "INSERT INTO threads (workspace_id, contact_id, channel_id, status)
         SELECT w.id, c.id, ch.id, 'open' FROM workspaces w, contacts c, channels ch",
        // A reply 9.9995 s after the message it answers, stored as the old rounding figured it.
        "INSERT INTO conversation_facts (workspace_id, thread_id, channel_id, kind, at, started_at, seconds, business_seconds)
         SELECT t.workspace_id, t.id, t.channel_id, 2, '2026-11-20 10:00:20+00', '2026-11-20 10:00:10.0005+00', 9, 10
         FROM threads t",
    ] {
        diesel::sql_query(sql).execute(&mut conn).await.unwrap_or_else(|e| panic!("{e}: {sql}"));
    }
    adapters_postgres::migrate::run_pending(&database.url).await.expect("migrate");
    adapters_postgres::business_hours::refigure_pending(&db).await.expect("refigure");
    let got: Seconds = diesel::sql_query("SELECT seconds, business_seconds FROM conversation_facts")
        .get_result(&mut conn)
        .await
        .expect("fact");
    assert_eq!((got.seconds, got.business_seconds), (Some(9), Some(9)), "no hours set: the wall clock's");
    crate::helpers::revert_through(&database.url, "20261205000101").await;
    adapters_postgres::migrate::run_pending(&database.url).await.expect("migrate again");
}
