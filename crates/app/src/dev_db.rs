//! The private PostgreSQL cluster of `wms dev` (and of `scripts/test` when no server is running):
//! initdb into `<data_dir>/postgres/data`, listening only on a unix socket in
//! `<data_dir>/postgres/run`, so it never collides with another server's port.
//! initdb refuses to run as root, so as root the cluster runs as the `postgres` system user.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{bail, Context};

/// A cluster on disk, started or not.
#[derive(Debug, Clone)]
pub struct EmbeddedCluster {
    bin_dir: PathBuf,
    root: PathBuf,
    run_as: Option<String>,
}

impl EmbeddedCluster {
    /// Locates PostgreSQL's server binaries and prepares `<data_dir>/postgres`.
    ///
    /// # Errors
    /// When no PostgreSQL server binaries are installed (says what to install), or the directory
    /// cannot be prepared.
    pub fn new(data_dir: &Path, bin_dir: Option<&Path>) -> anyhow::Result<Self> {
        let configured = bin_dir.map(|d| d.to_path_buf()).filter(|d| d.join("initdb").is_file());
        let bin_dir = match bin_dir {
            Some(_) => configured,
            None => find_bin_dir(),
        }
        .context(
            "PostgreSQL's server binaries (initdb, pg_ctl) were not found. Install them (Debian/Ubuntu: \
             `apt-get install postgresql`; macOS: `brew install postgresql`) or set DATABASE_URL to use a running server",
        )?;
        std::fs::create_dir_all(data_dir).with_context(|| format!("cannot create {}", data_dir.display()))?;
        let root = std::fs::canonicalize(data_dir)?.join("postgres");
        std::fs::create_dir_all(root.join("run"))?;
        let run_as = is_root().then(|| "postgres".to_owned());
        let cluster = Self { bin_dir, root, run_as };
        if let Some(user) = &cluster.run_as {
            let status = Command::new("chown").args(["-R", &format!("{user}:{user}")]).arg(&cluster.root).status()?;
            if !status.success() {
                bail!("cannot hand {} to the `{user}` user (is there a `{user}` system user?)", cluster.root.display());
            }
            let probe = cluster.command("test").args(["-w"]).arg(&cluster.root).status()?;
            if !probe.success() {
                bail!(
                    "the `{user}` user cannot reach {} (a parent directory is private). Set WMS__DEV__DATA_DIR to a \
                     directory it can reach, such as /var/tmp/wms",
                    cluster.root.display()
                );
            }
        }
        Ok(cluster)
    }

    fn data(&self) -> PathBuf {
        self.root.join("data")
    }

    fn socket_dir(&self) -> PathBuf {
        self.root.join("run")
    }

    /// The URL of database `db` in this cluster (over the unix socket). No host before the path:
    /// tokio-postgres would try `localhost:5432` first and, when another server runs there,
    /// silently use that one instead of this cluster.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@/{db}?host={}", self.socket_dir().display())
    }

    /// Runs initdb if the cluster does not exist, then starts it unless it is already running.
    ///
    /// # Errors
    /// When initdb or pg_ctl fail; their output is included.
    pub fn start(&self) -> anyhow::Result<()> {
        if !self.data().join("PG_VERSION").exists() {
            tracing::info!(dir = %self.data().display(), "creating a private PostgreSQL cluster");
            let out = self
                .command(&self.bin("initdb"))
                .arg("-D")
                .arg(self.data())
                .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-instructions"])
                .output()?;
            check(&out, "initdb")?;
        }
        if self.is_running() {
            return Ok(());
        }
        let options =
            format!("-c listen_addresses='' -k {} -c fsync=off -c max_connections=200", self.socket_dir().display());
        // setsid: the server gets its own session, so Ctrl-C in the terminal reaches wms (which
        // then stops the cluster in order) and not PostgreSQL directly.
        let mut cmd = self.command("setsid");
        cmd.arg("-w")
            .arg(self.bin("pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.root.join("postgres.log"))
            .args(["-w", "-t", "60", "-o", &options, "start"]);
        check(&cmd.output()?, "pg_ctl start")
            .with_context(|| format!("see {}", self.root.join("postgres.log").display()))?;
        Ok(())
    }

    /// Whether the server is running.
    pub fn is_running(&self) -> bool {
        self.command(&self.bin("pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .arg("status")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    }

    /// Stops the server (fast shutdown: sessions are ended, data is safe).
    ///
    /// # Errors
    /// When pg_ctl fails.
    pub fn stop(&self) -> anyhow::Result<()> {
        if !self.is_running() {
            return Ok(());
        }
        let out =
            self.command(&self.bin("pg_ctl")).arg("-D").arg(self.data()).args(["-m", "fast", "-w", "stop"]).output()?;
        check(&out, "pg_ctl stop")
    }

    fn bin(&self, name: &str) -> String {
        self.bin_dir.join(name).display().to_string()
    }

    fn command(&self, program: &str) -> Command {
        match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--", program]);
                c.current_dir(&self.root);
                c
            }
            None => Command::new(program),
        }
    }
}

fn check(out: &Output, what: &str) -> anyhow::Result<()> {
    if out.status.success() {
        return Ok(());
    }
    bail!(
        "{what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout).trim(),
        String::from_utf8_lossy(&out.stderr).trim()
    )
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false)
}

/// `initdb` on PATH, else the newest `/usr/lib/postgresql/<version>/bin` (Debian keeps it off PATH).
fn find_bin_dir() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if dir.join("initdb").is_file() && dir.join("pg_ctl").is_file() {
                return Some(dir);
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, p)| p)
}
