//! A private PostgreSQL primary and its streaming replica (`pg_basebackup -R`) on free loopback
//! ports, for the read-replica tests (docs/contract.md, "Operations at scale"). The data lives under
//! the target directory (`target/wms-clusters/<id>`) and is removed, with both servers stopped,
//! when the value is dropped.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use crate::pgbouncer::free_port;

/// The directory of PostgreSQL's server binaries: `WMS_TEST_PG_BIN`, else the newest
/// `/usr/lib/postgresql/*/bin`.
pub fn bin_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("WMS_TEST_PG_BIN") {
        return PathBuf::from(dir);
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path().join("bin"))).filter(|p| p.join("pg_ctl").exists()).collect())
        .unwrap_or_default();
    dirs.sort_by_key(|p| p.parent().and_then(|v| v.file_name()).and_then(|v| v.to_str()?.parse::<u32>().ok()));
    dirs.pop().unwrap_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"))
}

/// A running primary and replica.
#[derive(Debug)]
pub struct Cluster {
    /// The primary's port.
    pub primary_port: u16,
    /// The replica's port.
    pub replica_port: u16,
    dir: PathBuf,
}

impl Cluster {
    /// Initialises and starts a primary, then a replica streaming from it. A database made on the
    /// primary later reaches the replica too.
    ///
    /// # Errors
    /// When a server binary is missing or a server does not start.
    pub async fn start() -> anyhow::Result<Self> {
        Self::start_with("").await
    }

    /// [`Cluster::start`] with `conf` appended to the primary's `postgresql.conf` after the
    /// defaults (a later line wins: `max_connections = 12`, say).
    ///
    /// # Errors
    /// When a server binary is missing or a server does not start.
    pub async fn start_with(conf_extra: &str) -> anyhow::Result<Self> {
        let dir = clusters_dir().join(uuid::Uuid::new_v4().simple().to_string());
        std::fs::create_dir_all(&dir)?;
        let (primary_port, replica_port) = (free_port()?, free_port()?);
        let cluster = Self { primary_port, replica_port, dir };
        chown_postgres(&cluster.dir)?;
        let primary = cluster.primary_dir();
        run_as_postgres(
            "initdb",
            &["-D", path(&primary), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"],
        )?;
        let conf = format!(
            "port = {primary_port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\n\
             wal_level = replica\nmax_wal_senders = 5\nhot_standby = on\nfsync = off\n\
             synchronous_commit = off\nfull_page_writes = off\nshared_buffers = 32MB\nmax_connections = 200\n",
            path(&cluster.dir),
        );
        append(&primary.join("postgresql.conf"), &format!("{conf}{extra}\n", extra = conf_extra))?;
        cluster.start_server(&primary)?;
        wait_ready(primary_port).await?;
        Ok(cluster)
    }

    /// Copies the primary with `pg_basebackup -R` and starts the copy as a streaming replica.
    /// Call after creating the databases the replica should have (it streams later changes).
    ///
    /// # Errors
    /// When the copy or the start fails.
    pub async fn start_replica(&self) -> anyhow::Result<()> {
        let replica = self.replica_dir();
        let port = self.primary_port.to_string();
        run_as_postgres(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-D",
                path(&replica),
                "-R",
                "-X",
                "stream",
                "--no-sync",
                // Not a spread checkpoint on the primary: that alone takes minutes.
                "--checkpoint=fast",
            ],
        )?;
        append(&replica.join("postgresql.conf"), &format!("port = {}\n", self.replica_port))?;
        self.start_server(&replica)?;
        wait_ready(self.replica_port).await
    }

    /// The primary's URL for database `db`.
    pub fn primary_url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.primary_port)
    }

    /// The replica's URL for database `db`.
    pub fn replica_url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.replica_port)
    }

    /// Stops the replica in `mode` (`smart`: new connections are refused and it stops once its
    /// clients have gone; `fast`: at once).
    ///
    /// # Errors
    /// When `pg_ctl` fails.
    pub fn stop_replica(&self, mode: &str) -> anyhow::Result<()> {
        run_as_postgres("pg_ctl", &["-D", path(&self.replica_dir()), "-m", mode, "-t", "60", "-w", "stop"]).map(|_| ())
    }

    /// Starts the stopped replica again.
    ///
    /// # Errors
    /// When it does not start.
    pub async fn restart_replica(&self) -> anyhow::Result<()> {
        self.start_server(&self.replica_dir())?;
        wait_ready(self.replica_port).await
    }

    fn primary_dir(&self) -> PathBuf {
        self.dir.join("primary")
    }

    fn replica_dir(&self) -> PathBuf {
        self.dir.join("replica")
    }

    fn start_server(&self, data: &Path) -> anyhow::Result<()> {
        let log = data.with_extension("log");
        run_as_postgres("pg_ctl", &["-D", path(data), "-l", path(&log), "-t", "60", "-w", "start"]).map(|_| ())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for data in [self.replica_dir(), self.primary_dir()] {
            if data.join("postmaster.pid").exists() {
                let _ = run_as_postgres("pg_ctl", &["-D", path(&data), "-m", "immediate", "-w", "stop"]);
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `target/wms-clusters`, next to the test binaries.
fn clusters_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    // target/debug/deps/api-… → target
    let target = exe.ancestors().nth(3).map_or_else(std::env::temp_dir, Path::to_path_buf);
    target.join("wms-clusters")
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap_or_default()
}

fn append(file: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(file).with_context(|| file.display().to_string())?;
    f.write_all(text.as_bytes())?;
    Ok(())
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The servers refuse to run as root: as root, their files belong to `postgres`.
fn chown_postgres(dir: &Path) -> anyhow::Result<()> {
    if is_root() {
        let status = Command::new("chown").args(["-R", "postgres:", path(dir)]).status()?;
        if !status.success() {
            bail!("cannot give {} to postgres", dir.display());
        }
        // The parents must be passable.
        for parent in dir.ancestors().skip(1).take(3) {
            use std::os::unix::fs::PermissionsExt;
            if let Ok(meta) = std::fs::metadata(parent) {
                let mode = meta.permissions().mode();
                if mode & 0o001 == 0 {
                    let _ = std::fs::set_permissions(parent, std::fs::Permissions::from_mode(mode | 0o011));
                }
            }
        }
    }
    Ok(())
}

/// Runs a server binary (as `postgres` when root), returning its output; fails on a non-zero exit.
fn run_as_postgres(tool: &str, args: &[&str]) -> anyhow::Result<String> {
    let program = bin_dir().join(tool);
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(&program);
        c
    } else {
        Command::new(&program)
    };
    let out =
        cmd.args(args).stdin(Stdio::null()).output().with_context(|| format!("cannot run {}", program.display()))?;
    if !out.status.success() {
        bail!("{tool} failed: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Waits until the server on `port` accepts connections (30 s at most).
async fn wait_ready(port: u16) -> anyhow::Result<()> {
    use diesel_async::{AsyncConnection, AsyncPgConnection};
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match AsyncPgConnection::establish(&url).await {
            Ok(_) => return Ok(()),
            Err(e) if Instant::now() > deadline => bail!("no server on {port} after 30 s: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}
