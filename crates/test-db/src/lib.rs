#![doc = include_str!("../README.md")]

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use anyhow::Context;
use diesel::sql_types::BigInt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

pub mod cluster;
pub mod pgbouncer;

const DEFAULT_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// A fresh, migrated database that is dropped when this value is dropped.
#[derive(Debug)]
pub struct TestDatabase {
    /// Connection URL of the database.
    pub url: String,
    /// Its name.
    pub name: String,
    admin_url: String,
}

impl TestDatabase {
    /// Creates a fresh database cloned from the migrated template.
    ///
    /// # Errors
    /// When the server cannot be reached or the template cannot be built.
    pub async fn new() -> anyhow::Result<Self> {
        Self::new_on(admin_url()).await
    }

    /// [`TestDatabase::new`] on the server of `admin_url` (a private cluster's, say).
    ///
    /// # Errors
    /// When the server cannot be reached or the template cannot be built.
    pub async fn new_on(admin_url: String) -> anyhow::Result<Self> {
        let template = template_name();
        let mut admin = AsyncPgConnection::establish(&admin_url)
            .await
            .with_context(|| format!("cannot connect to the test server at {}", redact(&admin_url)))?;
        ensure_template(&mut admin, &admin_url, &template).await?;

        let name = format!("wms_test_{}_{}", checkout_id(), uuid::Uuid::new_v4().simple());
        // Concurrent clones of one template can collide on its lock briefly; retry.
        let mut last = None;
        for attempt in 0..20u64 {
            match diesel::sql_query(format!("CREATE DATABASE \"{name}\" TEMPLATE \"{template}\""))
                .execute(&mut admin)
                .await
            {
                Ok(_) => {
                    return Ok(Self { url: with_database(&admin_url, &name), name, admin_url });
                }
                Err(e) => {
                    last = Some(e);
                    tokio::time::sleep(Duration::from_millis(50 * (attempt + 1))).await;
                }
            }
        }
        Err(anyhow::anyhow!("cannot clone the template: {last:?}"))
    }

    /// URL of another database on the same server (for tests that need a second one).
    pub fn admin_url(&self) -> &str {
        &self.admin_url
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let admin_url = self.admin_url.clone();
        let name = self.name.clone();
        // Drop runs outside async code; a short-lived runtime on its own thread does the cleanup.
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
            rt.block_on(async move {
                if let Ok(mut c) = AsyncPgConnection::establish(&admin_url).await {
                    let _ = diesel::sql_query(format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                        .execute(&mut c)
                        .await;
                }
            });
        })
        .join();
    }
}

/// The URL of the server's maintenance database used to create and drop test databases.
pub fn admin_url() -> String {
    std::env::var("TEST_DATABASE_URL").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| DEFAULT_ADMIN_URL.to_owned())
}

/// This checkout's mark in the name of every database its tests create: the first 8 hex digits of
/// the SHA-256 of the checkout's canonical path. `scripts/test` computes the same
/// (`printf %s "$(pwd -P)" | sha256sum | cut -c1-8`) and removes only the leftovers that carry
/// it, so several checkouts can run their tests against one server at the same time.
pub fn checkout_id() -> String {
    use sha2::Digest;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    let digest = sha2::Sha256::digest(root.as_os_str().as_encoded_bytes());
    digest.iter().take(4).map(|b| format!("{b:02x}")).collect()
}

/// The template's name changes whenever any migration file changes, so edits are picked up.
fn template_name() -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let mut files: Vec<_> = walk(&dir);
    files.sort();
    let mut h = DefaultHasher::new();
    for f in files {
        f.hash(&mut h);
        std::fs::read(&f).unwrap_or_default().hash(&mut h);
    }
    format!("wms_template_{}_{:016x}", checkout_id(), h.finish())
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

async fn ensure_template(admin: &mut AsyncPgConnection, admin_url: &str, template: &str) -> anyhow::Result<()> {
    // One builder at a time across every test process (nextest runs each test in its own).
    diesel::sql_query("SELECT pg_advisory_lock(727274)").execute(admin).await?;
    let result = build_template_if_missing(admin, admin_url, template).await;
    diesel::sql_query("SELECT pg_advisory_unlock(727274)").execute(admin).await?;
    result
}

async fn build_template_if_missing(
    admin: &mut AsyncPgConnection,
    admin_url: &str,
    template: &str,
) -> anyhow::Result<()> {
    let exists: Count = diesel::sql_query("SELECT count(*) AS n FROM pg_database WHERE datname = $1")
        .bind::<diesel::sql_types::Text, _>(template)
        .get_result(admin)
        .await?;
    if exists.n > 0 {
        return Ok(());
    }
    // Built under a temporary name and renamed, so a crash never leaves a half-migrated template.
    let building = format!("{template}_building");
    diesel::sql_query(format!("DROP DATABASE IF EXISTS \"{building}\" WITH (FORCE)")).execute(admin).await?;
    diesel::sql_query(format!("CREATE DATABASE \"{building}\"")).execute(admin).await?;
    adapters_postgres::migrate::run_pending(&with_database(admin_url, &building)).await?;
    diesel::sql_query(format!("ALTER DATABASE \"{building}\" RENAME TO \"{template}\"")).execute(admin).await?;
    diesel::sql_query(format!("ALTER DATABASE \"{template}\" WITH IS_TEMPLATE true")).execute(admin).await?;
    Ok(())
}

/// `url` with its database name replaced by `db`.
pub fn with_database(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_part = match base[scheme_end..].find('/') {
        Some(i) => &base[..scheme_end + i],
        None => base,
    };
    match query {
        Some(q) => format!("{host_part}/{db}?{q}"),
        None => format!("{host_part}/{db}"),
    }
}

fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}://…{}", &url[..s], &url[at..]),
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{checkout_id, with_database};

    #[test]
    fn the_checkout_id_is_what_scripts_test_computes() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg("cd \"$1\" && printf %s \"$(pwd -P)\" | sha256sum | cut -c1-8")
            .arg("sh")
            .arg(root)
            .output()
            .expect("sh");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), checkout_id());
    }

    #[test]
    fn replaces_the_database_name() {
        assert_eq!(with_database("postgres://u:p@h:5/postgres", "x"), "postgres://u:p@h:5/x");
        assert_eq!(with_database("postgres://h/postgres?sslmode=disable", "x"), "postgres://h/x?sslmode=disable");
        assert_eq!(with_database("postgres://h", "x"), "postgres://h/x");
        assert_eq!(with_database("postgresql:///postgres?host=/tmp", "x"), "postgresql:///x?host=/tmp");
    }
}
