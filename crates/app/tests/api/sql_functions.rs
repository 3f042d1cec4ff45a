//! The live SQL functions are written once, in `crates/adapters-postgres/sql/functions/`, and the
//! migrations include them (`crates/adapters-postgres/sql/README.md`).

use std::collections::BTreeMap;

use adapters_postgres::migrate::{expand, file_digest, function_files, MIGRATIONS};
use diesel::migration::MigrationSource;
use diesel::pg::Pg;
use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use test_db::TestDatabase;

#[derive(QueryableByName)]
struct Function {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    definition: String,
}

/// The functions of the `public` schema (not those of extensions), by name, as PostgreSQL
/// prints them.
async fn live_functions(conn: &mut AsyncPgConnection) -> BTreeMap<String, String> {
    let rows: Vec<Function> = diesel::sql_query(
        "SELECT p.proname::text AS name, pg_get_functiondef(p.oid) AS definition
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = 'public'
           AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
         ORDER BY 1, 2",
    )
    .load(conn)
    .await
    .expect("functions");
    let mut by_name = BTreeMap::new();
    for f in rows {
        let again = by_name.insert(f.name.clone(), f.definition);
        assert!(again.is_none(), "{} is defined with two signatures: one file cannot say which is live", f.name);
    }
    by_name
}

#[tokio::test]
async fn every_live_function_is_the_file_of_its_name() {
    let database = TestDatabase::new().await.expect("test database");
    let mut conn = AsyncPgConnection::establish(&database.url).await.expect("connect");
    let live = live_functions(&mut conn).await;
    let files: BTreeMap<String, &str> = function_files().into_iter().collect();

    assert_eq!(
        live.keys().collect::<Vec<_>>(),
        files.keys().collect::<Vec<_>>(),
        "every function of a migrated database has exactly one file in sql/functions/, and no file is stale"
    );
    for (name, text) in &files {
        conn.batch_execute("BEGIN").await.expect("begin");
        conn.batch_execute(text).await.unwrap_or_else(|e| panic!("functions/{name}.sql does not run: {e}"));
        let after = live_functions(&mut conn).await;
        conn.batch_execute("ROLLBACK").await.expect("rollback");
        assert_eq!(
            after.get(name),
            live.get(name),
            "functions/{name}.sql differs from the function the migrations leave: add a migration that includes it"
        );
        assert_eq!(after.len(), live.len(), "functions/{name}.sql created another function");
    }
}

/// The delivery funnel every rollup counts by in SQL is the domain's rule, for every status and
/// stage.
#[tokio::test]
async fn the_sql_funnel_is_the_domains() {
    use domain::messaging::{FunnelStage, MessageStatus};
    #[derive(QueryableByName)]
    struct Reached {
        #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Bool>)]
        reached: Option<bool>,
    }
    let database = TestDatabase::new().await.expect("test database");
    let mut conn = AsyncPgConnection::establish(&database.url).await.expect("connect");
    for status in MessageStatus::ALL {
        for stage in FunnelStage::ALL {
            let row: Reached = diesel::sql_query("SELECT wms_message_reached($1, $2) AS reached")
                .bind::<Text, _>(status.as_str())
                .bind::<Text, _>(stage.as_str())
                .get_result(&mut conn)
                .await
                .expect("query");
            assert_eq!(row.reached, Some(status.reached(stage)), "{} at {}", status.as_str(), stage.as_str());
        }
    }
}

#[test]
fn every_include_names_a_file_of_sql() {
    let migrations = MigrationSource::<Pg>::migrations(&MIGRATIONS).expect("every migration expands");
    assert!(migrations.len() >= 10, "the migrations are embedded: {}", migrations.len());
    let text = function_files().into_iter().find(|(name, _)| name == "wms_authenticate").expect("the file").1;
    let pinned = format!("SELECT 1;\n--! include functions/wms_authenticate.sql {}\n", file_digest(text));
    let included = expand(&pinned).expect("a known file with its digest");
    assert!(included.contains("CREATE OR REPLACE FUNCTION wms_authenticate("), "{included}");
    let stale =
        expand("--! include functions/wms_authenticate.sql sha256:0000000000000000").expect_err("another digest");
    assert!(stale.contains("put the old text in its place"), "{stale}");
    let unpinned = expand("--! include functions/wms_authenticate.sql").expect_err("no digest");
    assert!(unpinned.contains("sha256:"), "{unpinned}");
    let missing = expand("--! include functions/nope.sql sha256:0000000000000000").expect_err("an unknown file");
    assert!(missing.contains("functions/nope.sql"), "{missing}");
}
