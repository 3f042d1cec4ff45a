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
