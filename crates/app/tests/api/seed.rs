//! The demo data has every kind of thing the later features report on, consistently: the
//! conversation report has figures worth looking at (reopened conversations, SLAs hit and
//! missed), each thread's SLA is what its messages and status give, and the report read from the
//! rollup is the aggregation of the facts.

use diesel::sql_types::BigInt;
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use domain::workspace::WorkspaceId;
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

use crate::helpers::TestApp;

#[derive(QueryableByName, Debug)]
struct Row {
    #[diesel(sql_type = diesel::sql_types::Text)]
    k: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

async fn counts(app: &TestApp, sql: &str, ws: i64) -> Vec<(String, i64)> {
    let mut conn = app.db.conn().await.expect("conn");
    let rows: Vec<Row> = diesel::sql_query(sql).bind::<BigInt, _>(ws).load(&mut conn).await.expect("query");
    rows.into_iter().map(|r| (r.k, r.n)).collect()
}

async fn one(app: &TestApp, sql: &str, ws: i64) -> i64 {
    let rows = counts(app, sql, ws).await;
    assert_eq!(rows.len(), 1, "{sql}");
    rows[0].1
}

fn urlencode(s: &str) -> String {
    s.replace('+', "%2B").replace(':', "%3A")
}

fn keys(rows: &[(String, i64)]) -> Vec<&str> {
    rows.iter().map(|(k, _)| k.as_str()).collect()
}

#[tokio::test]
async fn demo_data_covers_every_kind_and_status() {
    let app = TestApp::spawn().await;
    let cipher = app::secrets::cipher(&app.settings, &app.db, false).await.expect("cipher");
    let creds = app::commands::seed_demo(&app.db, cipher.as_ref(), None).await.expect("seed");
    let ws = creds.workspace_id;
    assert!(creds.email.is_some() && creds.password.is_some());

    let channels = counts(&app, "SELECT channel_type || ':' || status AS k, count(*) AS n FROM channels WHERE workspace_id = $1 GROUP BY 1 ORDER BY 1", ws).await;
    assert_eq!(keys(&channels), ["instagram:active", "messenger:active", "whatsapp:active", "whatsapp:disconnected"]);
    assert!(channels.iter().any(|(k, n)| k == "whatsapp:active" && *n >= 2), "several WhatsApp channels");

    let statuses = counts(
        &app,
        "SELECT status AS k, count(*) AS n FROM threads WHERE workspace_id = $1 GROUP BY 1 ORDER BY 1",
        ws,
    )
    .await;
    assert_eq!(keys(&statuses), ["open", "pending", "resolved"]);
    let assignees = counts(&app, "SELECT coalesce(assignee_type, 'none') AS k, count(*) AS n FROM threads WHERE workspace_id = $1 GROUP BY 1 ORDER BY 1", ws).await;
    assert_eq!(keys(&assignees), ["ai_agent", "none", "team", "user"]);
    let messages = counts(
        &app,
        "SELECT status AS k, count(*) AS n FROM messages WHERE workspace_id = $1 GROUP BY 1 ORDER BY 1",
        ws,
    )
    .await;
    assert_eq!(keys(&messages), ["delivered", "failed", "queued", "read", "sent"]);
    let senders = counts(
        &app,
        "SELECT sender_kind AS k, count(*) AS n FROM messages WHERE workspace_id = $1 GROUP BY 1 ORDER BY 1",
        ws,
    )
    .await;
    assert_eq!(keys(&senders), ["ai", "contact", "human", "template"]);
    let agents = counts(
        &app,
        "SELECT status AS k, count(*) AS n FROM ai_agents WHERE workspace_id = $1 GROUP BY 1 ORDER BY 1",
        ws,
    )
    .await;
    assert_eq!(keys(&agents), ["active", "draft"]);
    let hooks = counts(&app, "SELECT active::text AS k, count(*) AS n FROM webhook_destinations WHERE workspace_id = $1 GROUP BY 1 ORDER BY 1", ws).await;
    assert_eq!(keys(&hooks), ["false", "true"]);
    let misc = counts(
        &app,
        "SELECT 'labels' AS k, count(*) AS n FROM labels WHERE workspace_id = $1
         UNION ALL SELECT 'teams', count(*) FROM teams WHERE workspace_id = $1
         UNION ALL SELECT 'labelled', count(*) FROM thread_labels WHERE workspace_id = $1
         UNION ALL SELECT 'members', count(*) FROM workspace_members WHERE workspace_id = $1
         UNION ALL SELECT 'span_days', (extract(epoch FROM max(created_at) - min(created_at)) / 86400)::bigint FROM messages WHERE workspace_id = $1",
        ws,
    )
    .await;
    for (k, n) in &misc {
        assert!(*n > 0, "{k} is empty");
    }
    assert!(misc.iter().any(|(k, n)| k == "span_days" && *n >= 85), "90 days of data: {misc:?}");
}

#[tokio::test]
async fn demo_unread_counts_match_the_messages() {
    let app = TestApp::spawn().await;
    let cipher = app::secrets::cipher(&app.settings, &app.db, false).await.expect("cipher");
    let ws = app::commands::seed_demo(&app.db, cipher.as_ref(), None).await.expect("seed").workspace_id;
    let wrong = counts(
        &app,
        "SELECT t.id::text AS k, t.unread_count::bigint AS n FROM threads t
         WHERE t.workspace_id = $1 AND t.unread_count <> (SELECT count(*) FROM messages m
               WHERE m.thread_id = t.id AND m.direction = 'inbound' AND m.status <> 'read')",
        ws,
    )
    .await;
    assert!(wrong.is_empty(), "threads with inconsistent unread counts: {wrong:?}");
}

#[tokio::test]
async fn seeding_an_existing_workspace_fills_only_that_workspace() {
    let app = TestApp::spawn().await;
    let a = app.create_workspace(domain::workspace::PlanTier::Growth).await;
    let b = app.create_workspace(domain::workspace::PlanTier::Growth).await;
    let cipher = app::secrets::cipher(&app.settings, &app.db, false).await.expect("cipher");
    let creds = app::commands::seed_demo(&app.db, cipher.as_ref(), Some(WorkspaceId(a.id))).await.expect("seed");
    assert_eq!((creds.workspace_id, creds.email, creds.password), (a.id, None, None));
    let in_b = counts(&app, "SELECT 'messages' AS k, count(*) AS n FROM messages WHERE workspace_id = $1", b.id).await;
    assert_eq!(in_b, [("messages".to_owned(), 0)]);
}

#[tokio::test]
async fn seeding_a_missing_workspace_fails_cleanly() {
    let app = TestApp::spawn().await;
    let cipher = app::secrets::cipher(&app.settings, &app.db, false).await.expect("cipher");
    let err =
        app::commands::seed_demo(&app.db, cipher.as_ref(), Some(WorkspaceId(999_999))).await.expect_err("must fail");
    assert!(err.to_string().contains("no workspace with id 999999"));
}

#[tokio::test]
async fn demo_threads_read_like_conversations_in_time_order() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let cipher = app::secrets::cipher(&app.settings, &app.db, false).await.expect("cipher");
    app::commands::seed_demo(&app.db, cipher.as_ref(), Some(WorkspaceId(ws.id))).await.expect("seed");

    // Every thread: times rise with ids, and no message repeats the one before it.
    let broken = counts(
        &app,
        "SELECT 'time not rising with id in a thread' AS k, count(*) AS n FROM (SELECT created_at,
                lag(created_at) OVER (PARTITION BY thread_id ORDER BY id) AS prev FROM messages WHERE workspace_id = $1) x
          WHERE created_at <= prev
         UNION ALL SELECT 'same text twice in a row', count(*) FROM (SELECT content,
                lag(content) OVER (PARTITION BY thread_id ORDER BY id) AS prev FROM messages WHERE workspace_id = $1) x
          WHERE content = prev
         UNION ALL SELECT 'time not rising with id in the workspace', count(*) FROM (SELECT created_at,
                lag(created_at) OVER (ORDER BY id) AS prev FROM messages WHERE workspace_id = $1) x
          WHERE created_at < prev
         UNION ALL SELECT 'thread not opened by the customer', count(*) FROM messages m
          WHERE m.workspace_id = $1 AND m.direction = 'outbound'
            AND m.id = (SELECT min(id) FROM messages f WHERE f.thread_id = m.thread_id)",
        ws.id,
    )
    .await;
    for (what, n) in &broken {
        assert_eq!(*n, 0, "{what}");
    }

    // The longest thread, read the way an integrator reads it.
    let longest = counts(
        &app,
        "SELECT thread_id::text AS k, count(*) AS n FROM messages WHERE workspace_id = $1 GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1",
        ws.id,
    )
    .await;
    let (thread, n) = &longest[0];
    assert!(*n >= 6, "a conversation of several exchanges: {n}");
    let (status, body) = app.get_json(&format!("/v1/messages?thread_id={thread}&limit=100"), &key).await;
    assert_eq!(status, 200, "{body}");
    let data = body["data"].as_array().expect("data");
    assert_eq!(data.len() as i64, *n);
    for pair in data.windows(2) {
        let (newer, older) = (&pair[0], &pair[1]);
        assert!(newer["id"].as_i64() > older["id"].as_i64(), "newest first by id");
        let (t_new, t_old) = (newer["created_at"].as_str().unwrap_or(""), older["created_at"].as_str().unwrap_or(""));
        let parse =
            |t: &str| time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).expect("time");
        assert!(parse(t_new) > parse(t_old), "{t_new} after {t_old}");
        assert_ne!(newer["content"], older["content"], "a reply answers, it does not echo");
        // The customer and the team take turns.
        assert_ne!(newer["direction"], older["direction"]);
    }
    assert_eq!(data.last().map(|m| m["direction"].clone()), Some(serde_json::json!("inbound")));

    // Several languages, each contact's own.
    let languages = counts(
        &app,
        "SELECT ct.language AS k, count(DISTINCT m.content) AS n FROM messages m JOIN threads t ON t.id = m.thread_id
         JOIN contacts ct ON ct.id = t.contact_id WHERE m.workspace_id = $1 GROUP BY 1 ORDER BY 1",
        ws.id,
    )
    .await;
    assert_eq!(keys(&languages), ["de", "en", "es", "pt"]);

    // Today holds only what its hours so far can: no spike on the current day's bar.
    let days = counts(
        &app,
        "SELECT (created_at AT TIME ZONE 'UTC')::date::text AS k, count(*) AS n FROM messages
         WHERE workspace_id = $1 AND created_at >= now() - interval '15 days' GROUP BY 1 ORDER BY 1 DESC",
        ws.id,
    )
    .await;
    let today = counts(&app, "SELECT (now() AT TIME ZONE 'UTC')::date::text AS k, extract(hour FROM now() AT TIME ZONE 'UTC')::bigint AS n WHERE $1 > 0", ws.id).await;
    let (today, hour) = (&today[0].0, today[0].1);
    let on_today = days.iter().find(|(d, _)| d == today).map_or(0, |(_, n)| *n);
    let busiest_full_day = days.iter().filter(|(d, _)| d != today).map(|(_, n)| *n).max().unwrap_or(0);
    let allowed = busiest_full_day as f64 * (0.3 + 1.5 * (hour as f64 + 1.0) / 24.0).min(1.3);
    assert!(
        (on_today as f64) <= allowed,
        "{on_today} messages today by {hour}:00 UTC, busiest full day {busiest_full_day}: {days:?}"
    );
}

#[tokio::test]
async fn the_demo_data_has_report_figures_worth_looking_at() {
    let app = TestApp::spawn().await;
    let cipher = app::secrets::cipher(&app.settings, &app.db, false).await.expect("cipher");
    let (ws, key) = app.advanced_with_key().await;
    app::commands::seed_demo(&app.db, cipher.as_ref(), Some(WorkspaceId(ws.id))).await.expect("seed");
    let now = OffsetDateTime::now_utc();
    let since = urlencode(&(now - Duration::days(120)).format(&Rfc3339).expect("since"));
    let until = urlencode(&(now + Duration::days(1)).format(&Rfc3339).expect("until"));
    let period = format!("since={since}&until={until}");
    let (status, body) = app.get_json(&format!("/v1/reports/conversations?{period}"), &key).await;
    assert_eq!(status, 200, "{body}");
    let g = &body["groups"][0];
    // A thread the customer came back to once it was resolved: its SLA's cycle started after its
    // first message (every cycle has one, the standard policy applies to every channel).
    let reopened = one(
        &app,
        "SELECT 'reopened' AS k, count(*) AS n FROM thread_slas s WHERE s.workspace_id = $1
           AND s.cycle_started_at > (SELECT min(m.created_at) FROM messages m WHERE m.workspace_id = $1 AND m.thread_id = s.thread_id)",
        ws.id,
    )
    .await;
    let resolved = one(
        &app,
        "SELECT 'resolved' AS k, count(*) AS n FROM threads WHERE workspace_id = $1 AND status = 'resolved'",
        ws.id,
    )
    .await;
    assert!(
        (3 * resolved..=12 * resolved).contains(&(100 * reopened)),
        "{reopened} of {resolved} resolved threads reopened"
    );
    assert_eq!(g["conversations"], 1_200 + reopened, "one cycle per thread, two for a reopened one: {g}");
    assert_eq!(g["resolutions"], resolved + reopened, "a reopened thread was resolved twice: {g}");
    assert_eq!(g["incoming_messages"].as_i64().unwrap_or(0) + g["outgoing_messages"].as_i64().unwrap_or(0), 9_000);
    // People answer in minutes to hours, AI agents in seconds.
    let human = g["first_response"]["median"].as_i64().expect("human first responses");
    let ai = g["first_response_ai"]["median"].as_i64().expect("AI first responses");
    assert!((60..=4 * 3600).contains(&human) && ai < 60, "human {human} s, AI {ai} s");
    assert!(g["reply"]["p90"].as_i64() > g["reply"]["median"].as_i64(), "spread-out replies: {g}");
    // Most conversations meet their SLA, a good share does not.
    let (hit, missed) = (g["sla"]["hit"].as_i64().unwrap_or(0), g["sla"]["missed"].as_i64().unwrap_or(0));
    assert!(missed >= 100 && hit > missed, "SLAs hit {hit}, missed {missed}");
    for grouping in ["agent", "team", "label", "channel"] {
        let (status, body) =
            app.get_json(&format!("/v1/reports/conversations?{period}&group_by={grouping}"), &key).await;
        assert_eq!(status, 200);
        let groups = body["groups"].as_array().cloned().unwrap_or_default();
        assert!(groups.len() >= 2, "{grouping}: {body}");
        if grouping == "channel" {
            // The UK sales line has a policy of its own, in business hours.
            let uk = groups.iter().find(|g| g["key"]["name"] == "Sales (UK)").expect("the UK sales line");
            assert!(uk["sla"]["hit"].as_i64() > Some(0) && uk["sla"]["missed"].as_i64() > Some(0), "{uk}");
        }
    }
    assert_eq!(
        one(&app, "SELECT 'noted' AS k, count(*) AS n FROM conversation_backfill WHERE workspace_id = $1", ws.id).await,
        0
    );
}

#[tokio::test]
async fn demo_slas_are_what_each_threads_messages_and_status_give() {
    let app = TestApp::spawn().await;
    let cipher = app::secrets::cipher(&app.settings, &app.db, false).await.expect("cipher");
    let ws = app::commands::seed_demo(&app.db, cipher.as_ref(), None).await.expect("seed").workspace_id;

    let policies = counts(
        &app,
        "SELECT name || ':' || business_hours || ':' || cardinality(channel_ids) || ':' || cardinality(labels) AS k,
                count(*) AS n FROM sla_policies WHERE workspace_id = $1 GROUP BY 1 ORDER BY min(id)",
        ws,
    )
    .await;
    assert_eq!(
        keys(&policies),
        ["VIP customers:false:0:1", "Sales (UK), business hours:true:1:0", "Standard:false:0:0"]
    );
    assert_eq!(
        one(&app, "SELECT 'hours' AS k, count(*) AS n FROM business_hours WHERE workspace_id = $1", ws).await,
        1
    );

    // Each SLA checked against the thread's messages and status, as the live path decides
    // (docs/product/sla.md). A due time of the last minutes may have passed since the seed, or be
    // the live timer's now: it is left out. While pending, the clock stands and its due times
    // moved, so only the flags are checked.
    let wrong = counts(
        &app,
        "WITH t AS (
             SELECT th.status, th.updated_at AS status_at, s.*,
                    (SELECT min(m.created_at) FROM messages m WHERE m.workspace_id = $1 AND m.thread_id = th.id
                       AND m.direction = 'outbound' AND m.sender_type IN ('user', 'ai_agent')
                       AND m.created_at >= s.cycle_started_at) AS responded_at,
                    (SELECT max(f.at) FROM conversation_facts f WHERE f.workspace_id = $1 AND f.thread_id = th.id AND f.kind = 1)
                        AS last_cycle_at,
                    (SELECT count(*) FROM conversation_facts f WHERE f.workspace_id = $1 AND f.thread_id = th.id AND f.kind = 1)
                        AS cycles,
                    (SELECT count(*) FROM conversation_facts f WHERE f.workspace_id = $1 AND f.thread_id = th.id AND f.kind IN (8, 9))
                        AS outcomes
             FROM threads th JOIN thread_slas s ON s.workspace_id = th.workspace_id AND s.thread_id = th.id
             WHERE th.workspace_id = $1),
         e AS (SELECT t.*, CASE WHEN t.status = 'resolved' THEN t.status_at ELSE now() END AS ended_at,
                      now() - interval '5 minutes' AS settled_by FROM t)
         SELECT 'a thread the customer wrote to without an SLA' AS k, count(*) AS n FROM threads th
          WHERE th.workspace_id = $1 AND NOT EXISTS (SELECT 1 FROM thread_slas s WHERE s.workspace_id = $1 AND s.thread_id = th.id)
            AND EXISTS (SELECT 1 FROM messages m WHERE m.workspace_id = $1 AND m.thread_id = th.id AND m.direction = 'inbound')
         UNION ALL SELECT 'the SLA not of the last cycle the report counts', count(*) FROM e WHERE cycle_started_at <> last_cycle_at
         UNION ALL SELECT 'resolved but not resolved', count(*) FROM e WHERE resolved <> (status = 'resolved')
         UNION ALL SELECT 'the clock stopped but not pending', count(*) FROM e WHERE (stopped_since IS NOT NULL) <> (status = 'pending')
         UNION ALL SELECT 'responded without a response', count(*) FROM e WHERE responded <> (responded_at IS NOT NULL)
         UNION ALL SELECT 'first response missed or met wrongly', count(*) FROM e
          WHERE status <> 'pending' AND first_response_due_at < settled_by
            AND ('first_response' = ANY (breaches)) <> (first_response_due_at <= coalesce(responded_at, ended_at))
         UNION ALL SELECT 'resolution missed or met wrongly', count(*) FROM e
          WHERE status <> 'pending' AND resolution_due_at < settled_by
            AND ('resolution' = ANY (breaches)) <> (resolution_due_at <= ended_at)
         UNION ALL SELECT 'next response missed before a first one', count(*) FROM e
          WHERE 'next_response' = ANY (breaches) AND NOT responded
         UNION ALL SELECT 'the timer not on the earliest due time running', count(*) FROM e
          WHERE check_at IS DISTINCT FROM CASE WHEN stopped_since IS NULL AND NOT resolved THEN least(
                    CASE WHEN NOT responded AND NOT 'first_response' = ANY (breaches) THEN first_response_due_at END,
                    CASE WHEN NOT 'next_response' = ANY (breaches) THEN next_response_due_at END,
                    CASE WHEN NOT 'resolution' = ANY (breaches) THEN resolution_due_at END) END
         UNION ALL SELECT 'a due time passed unnoticed', count(*) FROM e WHERE check_at < settled_by
         -- Every cycle before the current one was resolved, so settled; the current one once it is.
         UNION ALL SELECT 'outcomes not one per settled cycle', count(*) FROM e
          WHERE outcomes <> cycles - 1 + CASE WHEN cardinality(breaches) > 0 OR resolved THEN 1 ELSE 0 END",
        ws,
    )
    .await;
    for (what, n) in &wrong {
        assert_eq!(*n, 0, "{what}");
    }

    // Each target is met by some conversations and missed by others.
    let targets = counts(
        &app,
        "SELECT target || CASE WHEN target = ANY (breaches) THEN ':missed' ELSE ':met' END AS k, count(*) AS n
         FROM thread_slas, unnest(ARRAY['first_response', 'next_response', 'resolution']) target
         WHERE workspace_id = $1
           AND (target = ANY (breaches) OR resolved OR (target = 'first_response' AND responded))
         GROUP BY 1 ORDER BY 1",
        ws,
    )
    .await;
    assert_eq!(
        keys(&targets),
        [
            "first_response:met",
            "first_response:missed",
            "next_response:met",
            "next_response:missed",
            "resolution:met",
            "resolution:missed"
        ]
    );
    assert!(targets.iter().all(|(_, n)| *n >= 10), "{targets:?}");

    // The report the settings page reads, from the rollup, is the aggregation of the facts.
    let start = (OffsetDateTime::now_utc() - Duration::days(95)).replace_time(time::Time::MIDNIGHT);
    let mut conn = app.db.conn().await.expect("conn");
    let periods = crate::reports_rollups::periods(start);
    crate::reports_rollups::assert_same_figures_over(&app.db, &mut conn, ws, &periods, "the demo workspace").await;
}
