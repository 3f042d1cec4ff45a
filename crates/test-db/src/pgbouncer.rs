//! A private PgBouncer on a free loopback port, in front of the test
//! server, for the tests that run wms the way a scaled-out deployment does (docs/contract.md,
//! "Operations at scale"). Stopped and its files removed when dropped.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

/// The PgBouncer the tests run: `WMS_TEST_PGBOUNCER` when set, else Debian's
/// (`/usr/sbin/pgbouncer`, 1.18 on Debian 12: what the contract names), else one
/// `scripts/pgbouncer-build` built into this checkout's `.tools/` (1.24.1).
pub fn binary() -> PathBuf {
    if let Some(named) = std::env::var_os("WMS_TEST_PGBOUNCER") {
        return PathBuf::from(named);
    }
    let debian = PathBuf::from("/usr/sbin/pgbouncer");
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.tools/pgbouncer-1.24.1/bin/pgbouncer");
    if debian.is_file() || !built.is_file() {
        debian
    } else {
        built
    }
}

/// A running PgBouncer.
#[derive(Debug)]
pub struct PgBouncer {
    /// Its loopback port.
    pub port: u16,
    /// Its pooling mode: `transaction`.
    pub mode: &'static str,
    /// The user of its admin console (the upstream's).
    user: String,
    child: Child,
    dir: PathBuf,
}

impl PgBouncer {
    /// Starts one in front of the server of `upstream` (a `postgres://user@host:port/db` URL), in
    /// transaction pooling with `pool_size` server connections at most, keeping no prepared
    /// statement of a client between its transactions (1.21+ could, with
    /// `max_prepared_statements`; it is left at 0, as 1.18 has it) and resetting every server
    /// connection after each transaction (`DISCARD ALL`), so that nothing can rely on session
    /// state.
    ///
    /// # Errors
    /// When PgBouncer is missing or does not start listening within 10 seconds.
    pub async fn start(upstream: &str, pool_size: u32) -> anyhow::Result<Self> {
        let (user, host, port) = parts(upstream);
        let mode = "transaction";
        // 1.21+ can keep prepared statements (and from 1.22 does by default): turned off, as
        // 1.18 has it, so the tests prove wms needs none.
        let keeps = keeps_prepared_statements(&version()?);
        let extra =
            format!("server_reset_query_always = 1\n{}", if keeps { "max_prepared_statements = 0\n" } else { "" });
        let dir = std::env::temp_dir().join(format!("wms-pgbouncer-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir)?;
        // PgBouncer refuses to run as root: it is started as `postgres` then, which must write here.
        set_mode(&dir, 0o777)?;
        let listen = free_port()?;
        std::fs::write(dir.join("users.txt"), format!("\"{user}\" \"\"\n"))?;
        let ini = format!(
            "[databases]\n* = host={host} port={port}\n\n[pgbouncer]\nlisten_addr = 127.0.0.1\n\
             listen_port = {listen}\nunix_socket_dir =\nauth_type = trust\nauth_file = {users}\n\
             pool_mode = {mode}\nmax_client_conn = 2000\ndefault_pool_size = {pool_size}\n\
             max_db_connections = {pool_size}\nreserve_pool_size = 0\n{extra}\
             server_reset_query = DISCARD ALL\n\
             ignore_startup_parameters = extra_float_digits,options\nadmin_users = {user}\n\
             logfile = {log}\npidfile = {pid}\n",
            users = dir.join("users.txt").display(),
            log = dir.join("pgbouncer.log").display(),
            pid = dir.join("pgbouncer.pid").display(),
        );
        let ini_path = dir.join("pgbouncer.ini");
        std::fs::write(&ini_path, ini)?;
        let mut cmd = Command::new(binary());
        if is_root() {
            cmd.args(["-u", "postgres"]);
        }
        let child = cmd
            .arg(&ini_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start {}", binary().display()))?;
        let bouncer = Self { port: listen, child, dir, mode, user: user.clone() };
        let deadline = Instant::now() + Duration::from_secs(10);
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], listen));
        while std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(bouncer.dir.join("pgbouncer.log")).unwrap_or_default();
                anyhow::bail!("PgBouncer did not listen on {listen} within 10 s: {log}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(bouncer)
    }

    /// `url` (a database of the upstream server) reached through this PgBouncer.
    pub fn url(&self, url: &str) -> String {
        let (user, _, _) = parts(url);
        let db = url.rsplit_once('/').map_or("postgres", |(_, db)| db.split('?').next().unwrap_or(db));
        format!("postgres://{user}@127.0.0.1:{}/{db}", self.port)
    }

    /// The rows of an admin console command (`SHOW STATS`, `SHOW CONFIG`…), each column by name.
    /// Through `psql`: the console speaks only the simple query protocol.
    ///
    /// # Errors
    /// When `psql` cannot run or the command fails.
    pub fn show(&self, command: &str) -> anyhow::Result<Vec<std::collections::HashMap<String, String>>> {
        let out = Command::new("psql")
            .args(["-X", "-A", "-F", "\t", "-P", "footer=off", "-c", command])
            .arg(format!("postgres://{}@127.0.0.1:{}/pgbouncer", self.user, self.port))
            .output()
            .context("psql")?;
        anyhow::ensure!(out.status.success(), "{command}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
        Ok(lines
            .map(|l| header.iter().zip(l.split('\t')).map(|(h, v)| ((*h).to_owned(), v.to_owned())).collect())
            .collect())
    }

    /// What PgBouncer logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether PgBouncer `version` (`1.18.0`) has `max_prepared_statements` (1.21 and later).
fn keeps_prepared_statements(version: &str) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (1, 21)
}

/// The version this PgBouncer reports (`1.18.0`).
///
/// # Errors
/// When it cannot be run.
pub fn version() -> anyhow::Result<String> {
    let out = Command::new(binary()).arg("--version").output().with_context(|| binary().display().to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.split_whitespace().nth(1).unwrap_or("unknown").to_owned())
}

/// User, host and port of a `postgres://user[:password]@host[:port]/db` URL.
fn parts(url: &str) -> (String, String, u16) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or(rest);
    let (user, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (u.split(':').next().unwrap_or("postgres").to_owned(), h),
        None => ("postgres".to_owned(), authority),
    };
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) => (h.to_owned(), p.parse().unwrap_or(5432)),
        None => (hostport.to_owned(), 5432),
    };
    (user, host, port)
}

/// A loopback port nobody listens on right now.
pub fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn set_mode(path: &std::path::Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}
