//! The SLA migration on a database filled before it: threads are kept, none has an SLA (no cycle
//! started under a policy), and the migration reverts cleanly.

use adapters_postgres::Db;
use diesel::sql_types::BigInt;
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

const VERSION: &str = "20261127000201";

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

async fn count(conn: &mut diesel_async::AsyncPgConnection, sql: &str) -> i64 {
    diesel::sql_query(sql).get_result::<Count>(conn).await.unwrap_or_else(|e| panic!("{e}: {sql}")).n
}

#[tokio::test]
async fn stored_threads_are_kept_without_an_sla_and_the_migration_reverts() {
    let database = test_db::TestDatabase::new().await.expect("database");
    crate::helpers::revert_through(&database.url, VERSION).await;
    let db = Db::new(&database.url, 2, std::time::Duration::from_secs(5)).expect("pool");
    let mut conn = db.conn().await.expect("conn");
    for sql in [
        "INSERT INTO workspaces (name, slug, plan) VALUES ('Old', 'old', 'advanced')",
        "INSERT INTO channels (workspace_id, channel_type, display_name, identifier, status)
         SELECT id, 'whatsapp', 'Old', '+14155550100', 'active' FROM workspaces",
        "INSERT INTO contacts (workspace_id, phone) SELECT id, '+14155550199' FROM workspaces",
        "INSERT INTO threads (workspace_id, contact_id, channel_id, status)
         SELECT w.id, c.id, ch.id, s FROM workspaces w, contacts c, channels ch,
                unnest(ARRAY['open', 'resolved', 'pending', 'snoozed']) AS s",
    ] {
        diesel::sql_query(sql).execute(&mut conn).await.unwrap_or_else(|e| panic!("{e}: {sql}"));
    }
    adapters_postgres::migrate::run_pending(&database.url).await.expect("migrate");
    assert_eq!(count(&mut conn, "SELECT count(*) AS n FROM threads").await, 4);
    assert_eq!(count(&mut conn, "SELECT count(*) AS n FROM thread_slas").await, 0);
    diesel::sql_query(
        "INSERT INTO sla_policies (workspace_id, name, first_response_seconds) SELECT id, 'Gold', 60 FROM workspaces",
    )
    .execute(&mut conn)
    .await
    .expect("policy");
    crate::helpers::revert_through(&database.url, VERSION).await;
    assert_eq!(count(&mut conn, "SELECT count(*) AS n FROM threads").await, 4, "down keeps the threads");
    adapters_postgres::migrate::run_pending(&database.url).await.expect("migrate again");
}
