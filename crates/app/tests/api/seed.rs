//! The demo data has every kind of thing the later features report on, consistently.

use diesel::sql_types::BigInt;
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use domain::workspace::WorkspaceId;

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
