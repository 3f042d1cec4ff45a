//! Documentation ingests at once (every `wms serve` ingests at start, `wms docs ingest` by hand)
//! end with one consistent index and no error (issue: a duplicate key on `docs_lexemes_pkey`
//! about one time in three).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use adapters_postgres::Db;
use diesel_async::RunQueryDsl;

use crate::helpers::TestApp;

fn product_docs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/product")
}

async fn count(db: &Db, query: &str) -> i64 {
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = db.conn().await.expect("conn");
    diesel::sql_query(query).get_result::<N>(&mut conn).await.expect("count").n
}

async fn sql(db: &Db, statement: &str) {
    let mut conn = db.conn().await.expect("conn");
    diesel::sql_query(statement).execute(&mut conn).await.expect("sql");
}

/// The index holds every page once, ready, and the statistics describe exactly its chunks.
async fn assert_consistent(db: &Db, pages: i64) {
    assert_eq!(count(db, "SELECT count(*) AS n FROM docs_documents WHERE status = 'ready'").await, pages);
    assert_eq!(count(db, "SELECT count(*) AS n FROM docs_documents").await, pages);
    let stale = count(
        db,
        "SELECT count(*) AS n FROM (
           (SELECT lexeme, chunks FROM docs_lexemes
            EXCEPT SELECT word, ndoc FROM ts_stat('SELECT c.search FROM docs_chunks c
                     JOIN docs_documents d ON d.id = c.document_id AND d.status = ''ready'''))
           UNION ALL
           (SELECT word, ndoc FROM ts_stat('SELECT c.search FROM docs_chunks c
                     JOIN docs_documents d ON d.id = c.document_id AND d.status = ''ready''')
            EXCEPT SELECT lexeme, chunks FROM docs_lexemes)) x",
    )
    .await;
    assert_eq!(stale, 0, "docs_lexemes differs from the chunks");
    let counted = count(db, "SELECT chunks::bigint AS n FROM docs_index_state").await;
    assert_eq!(counted, count(db, "SELECT count(*) AS n FROM docs_chunks").await);
    // Chunks of a page are numbered once each.
    let duplicates = count(
        db,
        "SELECT count(*) AS n FROM (SELECT document_id, ordinal FROM docs_chunks
                                   GROUP BY 1, 2 HAVING count(*) > 1) d",
    )
    .await;
    assert_eq!(duplicates, 0);
}

/// What two servers starting and one `wms docs ingest` run, twenty times on an empty index, each
/// ingest on its own pool as in separate processes.
#[tokio::test]
async fn three_ingests_at_once_twenty_times_all_succeed_with_one_index() {
    let app = TestApp::spawn().await;
    let pages = i64::try_from(std::fs::read_dir(product_docs()).expect("docs").count()).expect("count");
    let pool = || Db::new(&app.database.url, 2, Duration::from_secs(30)).expect("pool");
    let (a, b, c) = (pool(), pool(), pool());
    let dir = product_docs();
    for round in 0..20 {
        sql(&app.db, "TRUNCATE docs_documents, docs_chunks, docs_lexemes").await;
        let (x, y, z) = tokio::join!(
            app::docs_search::ingest_embedded(&app.settings, &a),
            app::docs_search::ingest_embedded(&app.settings, &b),
            app::docs_search::ingest_dir(&app.settings, &c, &dir),
        );
        for (who, r) in [("serve 1", x), ("serve 2", y), ("docs ingest", z)] {
            let report = r.unwrap_or_else(|e| panic!("round {round}: {who} failed: {e:#}"));
            assert!(report.failed.is_empty(), "round {round}: {who}: {:?}", report.failed);
        }
        assert_consistent(&app.db, pages).await;
    }
}

fn wms() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wms"));
    for (k, _) in std::env::vars() {
        if k.starts_with("WMS") || k == "DATABASE_URL" || k == "RUST_LOG" {
            cmd.env_remove(k);
        }
    }
    cmd
}

/// The same with the real binaries: two `wms serve` starting and one `wms docs ingest`.
#[tokio::test]
async fn two_servers_starting_and_the_cli_ingest_at_once_with_the_binaries() {
    let app = TestApp::spawn().await;
    let pages = i64::try_from(std::fs::read_dir(product_docs()).expect("docs").count()).expect("count");
    let logs = std::env::temp_dir().join(format!("wms-ingest-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&logs).expect("log dir");
    let mut servers = Vec::new();
    for i in 0..2 {
        let port =
            std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("port");
        let log = std::fs::File::create(logs.join(format!("serve-{i}.log"))).expect("log");
        servers.push(
            wms()
                .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
                .env("DATABASE_URL", &app.database.url)
                .env("WMS__CONNECTORS__WORKERS", "0")
                // The key the test database's secrets are sealed with (a server needs one).
                .env("WMS__SECRETS__ENCRYPTION_KEY", app.settings.secrets.encryption_key.as_deref().expect("key"))
                .current_dir(std::env::temp_dir())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("serve"),
        );
    }
    let cli = wms()
        .args(["docs", "ingest", &product_docs().display().to_string()])
        .env("DATABASE_URL", &app.database.url)
        .output()
        .expect("docs ingest");
    assert!(cli.status.success(), "docs ingest failed: {}", String::from_utf8_lossy(&cli.stderr));
    // Each server logs the outcome of its ingest.
    let mut outcomes = Vec::new();
    for _ in 0..300 {
        outcomes = (0..2)
            .map(|i| std::fs::read_to_string(logs.join(format!("serve-{i}.log"))).unwrap_or_default())
            .collect::<Vec<_>>();
        if outcomes.iter().all(|l| l.contains("documentation ingested") || l.contains("documentation not ingested")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for mut s in servers {
        let _ = s.kill();
        let _ = s.wait();
    }
    let _ = std::fs::remove_dir_all(&logs);
    for log in &outcomes {
        assert!(log.contains("documentation ingested"), "a server did not ingest: {log}");
        assert!(!log.contains("documentation not ingested"), "{log}");
    }
    assert_consistent(&app.db, pages).await;
}
