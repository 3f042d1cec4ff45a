//! The lifecycle migration on a database filled before it: statuses outside the four become
//! `open`, and stored messages carry the sender their row gives.

use adapters_postgres::Db;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

const VERSION: &str = "20261126000701";

#[derive(QueryableByName, Debug, PartialEq)]
struct Sent {
    #[diesel(sql_type = Text)]
    content: String,
    #[diesel(sql_type = Text)]
    sender_type: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    sender_id: Option<i64>,
}

#[derive(QueryableByName)]
struct Status {
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[tokio::test]
async fn stored_statuses_and_messages_are_kept_in_the_new_shape() {
    let database = test_db::TestDatabase::new().await.expect("database");
    // Back to the schema before the lifecycle (and whatever came after it).
    crate::helpers::revert_through(&database.url, VERSION).await;
    let db = Db::new(&database.url, 2, std::time::Duration::from_secs(5)).expect("pool");
    let mut conn = db.conn().await.expect("conn");
    for sql in [
        "INSERT INTO workspaces (name, slug, plan) VALUES ('Old', 'old', 'advanced')",
        "INSERT INTO users (email, name, password_hash) VALUES ('old@test.wms', 'Old', 'x')",
        "INSERT INTO workspace_members (workspace_id, user_id, role) SELECT w.id, u.id, 'admin' FROM workspaces w, users u",
        "INSERT INTO ai_agents (workspace_id, name, status) SELECT id, 'Bot', 'active' FROM workspaces",
        "INSERT INTO channels (workspace_id, channel_type, display_name, identifier, status)
         SELECT id, 'whatsapp', 'Old', '+14155550100', 'active' FROM workspaces",
        "INSERT INTO contacts (workspace_id, phone) SELECT id, '+14155550199' FROM workspaces",
        "INSERT INTO threads (workspace_id, contact_id, channel_id, status)
         SELECT w.id, c.id, ch.id, s FROM workspaces w, contacts c, channels ch,
                unnest(ARRAY['open', 'resolved', 'pending', 'waiting_on_customer', 'escalated']) AS s",
        "INSERT INTO messages (workspace_id, thread_id, channel_id, direction, sender_kind, author_user_id, author_ai_agent_id, content, status)
         SELECT t.workspace_id, t.id, t.channel_id, v.direction, v.kind, v.u, v.a, v.content, 'delivered'
         FROM (SELECT * FROM threads ORDER BY id LIMIT 1) t,
              (SELECT 'inbound' AS direction, 'contact' AS kind, NULL::bigint AS u, NULL::bigint AS a, 'from the contact' AS content
               UNION ALL SELECT 'outbound', 'human', (SELECT id FROM users), NULL, 'by a member'
               UNION ALL SELECT 'outbound', 'ai', NULL, (SELECT id FROM ai_agents), 'by an agent'
               UNION ALL SELECT 'outbound', 'human', NULL, NULL, 'by a key') v",
    ] {
        diesel::sql_query(sql).execute(&mut conn).await.unwrap_or_else(|e| panic!("{e}: {sql}"));
    }
    adapters_postgres::migrate::run_pending(&database.url).await.expect("migrate");

    let statuses: Vec<Status> =
        diesel::sql_query("SELECT status, count(*) AS n FROM threads GROUP BY status ORDER BY status")
            .load(&mut conn)
            .await
            .expect("statuses");
    let statuses: Vec<(String, i64)> = statuses.into_iter().map(|s| (s.status, s.n)).collect();
    assert_eq!(statuses, [("open".to_owned(), 3), ("pending".to_owned(), 1), ("resolved".to_owned(), 1)]);
    // The assistant's per-status counts moved with them.
    let stats: Vec<Status> = diesel::sql_query(
        "SELECT status, sum(threads)::bigint AS n FROM thread_status_stats GROUP BY status HAVING sum(threads) <> 0 ORDER BY status",
    )
    .load(&mut conn)
    .await
    .expect("stats");
    assert_eq!(stats.into_iter().map(|s| (s.status, s.n)).collect::<Vec<_>>(), statuses);
    let sent: Vec<Sent> = diesel::sql_query("SELECT content, sender_type, sender_id FROM messages ORDER BY id")
        .load(&mut conn)
        .await
        .expect("messages");
    #[derive(QueryableByName)]
    struct Ids {
        #[diesel(sql_type = BigInt)]
        contact: i64,
        #[diesel(sql_type = BigInt)]
        user: i64,
        #[diesel(sql_type = BigInt)]
        agent: i64,
    }
    let ids: Ids = diesel::sql_query(
        "SELECT (SELECT id FROM contacts) AS contact, (SELECT id FROM users) AS user, (SELECT id FROM ai_agents) AS agent",
    )
    .get_result(&mut conn)
    .await
    .expect("ids");
    let row = |content: &str, t: &str, id: Option<i64>| Sent {
        content: content.into(),
        sender_type: t.into(),
        sender_id: id,
    };
    assert_eq!(
        sent,
        [
            row("from the contact", "contact", Some(ids.contact)),
            row("by a member", "user", Some(ids.user)),
            row("by an agent", "ai_agent", Some(ids.agent)),
            row("by a key", "api_key", None),
        ]
    );
}
