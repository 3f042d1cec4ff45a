//! The migrations under `migrations/`, embedded in the binary.

use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use crate::pool::Db;

/// Every migration of the repository, compiled in.
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations");

/// Applies every pending migration to the database at `url` and returns the versions applied.
///
/// # Errors
/// When the database cannot be reached or a migration fails (it is rolled back).
pub async fn run_pending(url: &str) -> anyhow::Result<Vec<String>> {
    let url = url.to_owned();
    tokio::task::spawn_blocking(move || -> anyhow::Result<Vec<String>> {
        let mut conn = migration_connection(&url)?;
        let applied = conn.run_pending_migrations(MIGRATIONS).map_err(|e| anyhow::anyhow!("migration failed: {e}"))?;
        Ok(applied.iter().map(ToString::to_string).collect())
    })
    .await?
}

/// A connection for diesel's migration harness. Its `CREATE TABLE IF NOT EXISTS
/// __diesel_schema_migrations` makes the server send a NOTICE on every start after the first;
/// notices below warnings say nothing an operator needs, so this session does not ask for them.
fn migration_connection(url: &str) -> anyhow::Result<AsyncConnectionWrapper<AsyncPgConnection>> {
    use diesel::connection::SimpleConnection;
    use diesel::Connection;
    let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::establish(url)?;
    conn.batch_execute("SET client_min_messages TO warning")?;
    Ok(conn)
}

/// Reverts the most recent migration (for `wms migrate --revert`).
///
/// # Errors
/// When the database cannot be reached or the revert fails.
pub async fn revert_last(url: &str) -> anyhow::Result<String> {
    let url = url.to_owned();
    tokio::task::spawn_blocking(move || -> anyhow::Result<String> {
        let mut conn = migration_connection(&url)?;
        let v = conn.revert_last_migration(MIGRATIONS).map_err(|e| anyhow::anyhow!("revert failed: {e}"))?;
        Ok(v.to_string())
    })
    .await?
}

/// The version of the newest embedded migration (`20261120000001`).
pub fn latest_embedded_version() -> String {
    use diesel::migration::MigrationSource;
    let migrations: Vec<Box<dyn diesel::migration::Migration<diesel::pg::Pg>>> =
        MigrationSource::<diesel::pg::Pg>::migrations(&MIGRATIONS).unwrap_or_default();
    migrations.iter().map(|m| m.name().version().to_string()).max().unwrap_or_default()
}

#[derive(QueryableByName)]
struct Latest {
    #[diesel(sql_type = Text)]
    version: String,
    #[diesel(sql_type = BigInt)]
    _n: i64,
}

/// Whether the database is reachable and has every embedded migration applied. One cheap query,
/// so readiness probes can call it often.
pub async fn is_current(db: &Db, latest: &str) -> bool {
    let Ok(mut conn) = db.conn().await else { return false };
    let row: Result<Latest, _> = diesel::sql_query(
        "SELECT coalesce(max(version), '') AS version, count(*) AS _n FROM __diesel_schema_migrations",
    )
    .get_result(&mut conn)
    .await;
    matches!(row, Ok(r) if r.version.as_str() >= latest)
}

/// [`run_pending`] under a session advisory lock, so several instances starting at once apply each
/// migration exactly once.
///
/// # Errors
/// As [`run_pending`].
pub async fn run_pending_locked(db: &Db, url: &str) -> anyhow::Result<Vec<String>> {
    let mut lock_conn = db.conn().await?;
    diesel::sql_query("SELECT pg_advisory_lock(727273)").execute(&mut lock_conn).await?;
    let result = run_pending(url).await;
    let _ = diesel::sql_query("SELECT pg_advisory_unlock(727273)").execute(&mut lock_conn).await;
    result
}
