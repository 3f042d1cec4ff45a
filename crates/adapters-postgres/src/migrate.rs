//! The migrations under `migrations/`, embedded in the binary, with the live SQL functions of
//! `crates/adapters-postgres/sql/functions/` included where a migration names them.
//!
//! A migration's `up.sql` or `down.sql` may hold a line `--! include functions/<name>.sql sha256:…`;
//! it is replaced by that file when the migration runs, provided the file still has the digest the
//! line pins (so a file edited after a migration shipped cannot change what that migration does). Each function the running code relies on is
//! written once, in its file, and the latest migration that (re)defines it includes it
//! (`crates/adapters-postgres/sql/README.md` says how to change one). diesel's own
//! `embed_migrations!` cannot include files, hence this small [`MigrationSource`].

use std::fmt;

use diesel::migration::{Migration, MigrationMetadata, MigrationName, MigrationSource, MigrationVersion};
use diesel::pg::Pg;
use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use diesel_migrations::MigrationHarness;
use include_dir::{include_dir, Dir};

use crate::pool::Db;

static MIGRATION_DIRS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../migrations");
static SQL_FILES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/sql");

/// The line that includes a file of `sql/` into a migration.
const INCLUDE: &str = "--! include ";

/// Every migration of the repository, compiled in, with its includes expanded.
pub const MIGRATIONS: Migrations = Migrations;

/// The embedded migrations (a [`MigrationSource`] for diesel's harness).
#[derive(Debug, Clone, Copy)]
pub struct Migrations;

impl MigrationSource<Pg> for Migrations {
    fn migrations(&self) -> diesel::migration::Result<Vec<Box<dyn Migration<Pg>>>> {
        let mut all = Vec::new();
        for dir in MIGRATION_DIRS.dirs() {
            let name = dir.path().to_string_lossy().into_owned();
            let read = |file: &str| dir.get_file(dir.path().join(file)).and_then(|f| f.contents_utf8());
            let up = read("up.sql").ok_or_else(|| format!("migration {name} has no up.sql"))?;
            let up = expand(up).map_err(|e| format!("migration {name}, up.sql: {e}"))?;
            let down =
                read("down.sql").map(expand).transpose().map_err(|e| format!("migration {name}, down.sql: {e}"))?;
            let version = name.split('_').next().unwrap_or_default().replace('-', "");
            all.push(Box::new(SqlMigration { name: MigrationId { name, version }, up, down }) as Box<dyn Migration<Pg>>);
        }
        all.sort_by_key(|m| m.name().version().to_string());
        Ok(all)
    }
}

/// `sql` with every include line replaced by the file it names.
///
/// # Errors
/// An include naming a file that `sql/` does not hold.
pub fn expand(sql: &str) -> Result<String, String> {
    let mut out = String::with_capacity(sql.len());
    for line in sql.lines() {
        match line.trim().strip_prefix(INCLUDE) {
            Some(include) => {
                let mut words = include.split_whitespace();
                let (path, pinned) = (words.next().unwrap_or_default(), words.next().unwrap_or_default());
                let text = SQL_FILES
                    .get_file(path)
                    .and_then(|f| f.contents_utf8())
                    .ok_or_else(|| format!("includes {path}, which crates/adapters-postgres/sql/ does not hold"))?;
                let digest = file_digest(text);
                if pinned != digest {
                    return Err(format!(
                        "includes {path} as {pinned:?} but the file is now {digest}: a shipped migration must go on \
                         creating what it created, so put the old text in its place and include the new file from \
                         a new migration (crates/adapters-postgres/sql/README.md)"
                    ));
                }
                out.push_str(text);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    Ok(out)
}

/// The digest an include line pins its file to: `sha256:` and the first 16 hex digits of the
/// SHA-256 of the file's text.
pub fn file_digest(text: &str) -> String {
    use sha2::{Digest, Sha256};
    let hash = Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The live function files (`functions/<name>.sql`) with their text, for the test that compares
/// them with a migrated database.
pub fn function_files() -> Vec<(String, &'static str)> {
    SQL_FILES
        .get_dir("functions")
        .map(|d| {
            d.files()
                .filter_map(|f| {
                    let name = f.path().file_stem()?.to_string_lossy().into_owned();
                    Some((name, f.contents_utf8()?))
                })
                .collect()
        })
        .unwrap_or_default()
}

struct MigrationId {
    name: String,
    version: String,
}

impl fmt::Display for MigrationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl MigrationName for MigrationId {
    fn version(&self) -> MigrationVersion<'_> {
        MigrationVersion::from(self.version.as_str())
    }
}

/// Every migration runs in a transaction (diesel's default).
struct InTransaction;

impl MigrationMetadata for InTransaction {}

struct SqlMigration {
    name: MigrationId,
    up: String,
    down: Option<String>,
}

impl Migration<Pg> for SqlMigration {
    fn run(&self, conn: &mut dyn diesel::connection::BoxableConnection<Pg>) -> diesel::migration::Result<()> {
        conn.batch_execute(&self.up).map_err(|e| format!("migration {} failed: {e}", self.name).into())
    }

    fn revert(&self, conn: &mut dyn diesel::connection::BoxableConnection<Pg>) -> diesel::migration::Result<()> {
        let down = self.down.as_deref().ok_or_else(|| format!("migration {} has no down.sql", self.name))?;
        conn.batch_execute(down).map_err(|e| format!("reverting migration {} failed: {e}", self.name).into())
    }

    fn metadata(&self) -> &dyn MigrationMetadata {
        &InTransaction
    }

    fn name(&self) -> &dyn MigrationName {
        &self.name
    }
}

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
    let read = async {
        let Ok(mut conn) = db.conn().await else { return false };
        let row: Result<Latest, _> = diesel::sql_query(
            "SELECT coalesce(max(version), '') AS version, count(*) AS _n FROM __diesel_schema_migrations",
        )
        .get_result(&mut conn)
        .await;
        matches!(row, Ok(r) if r.version.as_str() >= latest)
    };
    // A database that stopped answering is not current either (`Db::ping`).
    tokio::time::timeout(db.acquire_timeout(), read).await.unwrap_or(false)
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
