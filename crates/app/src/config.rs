//! Layered configuration: built-in defaults, then an optional TOML file (`--config` or
//! `WMS_CONFIG`), then `WMS__SECTION__KEY` environment variables, then `DATABASE_URL`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

mod validate;

pub use validate::{parse_bind, parse_retry_schedule};

/// Every setting of the service. The README's configuration table lists them with their defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Database connection.
    pub database: DatabaseSettings,
    /// HTTP server.
    pub http: HttpSettings,
    /// Logging.
    pub log: LogSettings,
    /// `/v1` rate limit.
    pub rate_limit: RateLimitSettings,
    /// Login tokens and sessions.
    pub auth: AuthSettings,
    /// Outbound webhooks.
    pub webhooks: WebhookSettings,
    /// The audit log.
    pub audit: AuditSettings,
    /// The assistant's tools.
    pub co_admin: CoAdminSettings,
    /// Embeddings provider for hybrid documentation search.
    pub embeddings: ProviderSettings,
    /// Rerank provider for hybrid documentation search.
    pub rerank: ProviderSettings,
    /// Secrets at rest.
    pub secrets: SecretSettings,
    /// Sending through WhatsApp, Messenger and Instagram.
    pub connectors: ConnectorSettings,
    /// `wms dev` only.
    pub dev: DevSettings,
    /// The Prometheus listener.
    #[serde(default)]
    pub metrics: MetricsSettings,
    /// GitHub's secret-scanning partner alerts.
    pub secret_scanning: SecretScanningSettings,
    /// E-mail: the SMTP server and the outbox's workers.
    pub mail: MailSettings,
}

/// `mail.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MailSettings {
    /// `smtp://[user:password@]host:port` (STARTTLS when the server offers it) or `smtps://…`
    /// (TLS from the start). Unset: `wms dev` prints each mail on its console, `wms serve` warns at
    /// start and keeps mail queued until an instance runs with it set.
    pub smtp_url: Option<String>,
    /// The sender, `Name <address>` or an address.
    pub from: String,
    /// Comma-separated seconds to wait after the first, second, … failed attempt; the last one
    /// repeats until the mail is sent (or `give_up_after_hours`, when set).
    pub retry_schedule: String,
    /// When set, a mail still not sent this long after it was queued has failed, in hours. Unset
    /// (the default): a server that does not answer delays mail and never loses it.
    pub give_up_after_hours: Option<u64>,
    /// Time limit of one SMTP send (connection included), in seconds.
    pub timeout_secs: u64,
    /// How long a worker holds a mail it is sending (at least `timeout_secs` + 5): a worker that
    /// died leaves it to another after this.
    pub lease_secs: u64,
    /// How often an idle mail worker looks for due mail, in milliseconds.
    pub poll_interval_ms: u64,
    /// Mail workers per instance; 0 sends no mail from this instance.
    pub workers: usize,
    /// Sent and failed mails are kept this long, in days.
    pub retention_days: u64,
}

/// `secret_scanning.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretScanningSettings {
    /// GitHub's published secret-scanning keys (`{"public_keys": [{"key_identifier", "key",
    /// "is_current"}]}`), which verify the alerts' signatures. The operator's URL: fetched without
    /// the webhooks' SSRF filter.
    pub github_keys_url: String,
}

/// `metrics.*`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsSettings {
    /// Where `GET /metrics` (Prometheus text format) is served, on a listener of its own
    /// (`127.0.0.1:9090`); unset: no metrics are kept or served.
    pub bind: Option<String>,
}

/// `database.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSettings {
    /// PostgreSQL URL; `DATABASE_URL` sets it too. Required by `serve`.
    pub url: Option<String>,
    /// Largest number of pooled connections.
    pub pool_size: usize,
    /// How long `serve` keeps retrying an unreachable database at start, in seconds.
    pub connect_timeout_secs: u64,
    /// Whether `serve` applies pending migrations at start (under a lock, so instances can race).
    pub migrate_on_start: bool,
    /// The longest any wait for the database lasts (a pooled connection, a new one, a coalesced
    /// statement, a worker's claim), in milliseconds; past it the request is answered 503.
    pub acquire_timeout_ms: u64,
    /// Whether `url` is a PgBouncer in transaction pooling mode: then no session state outlives
    /// a transaction (advisory locks are transaction-scoped, statements are sent unnamed) and
    /// migrations take `migrate_url`.
    pub pgbouncer: bool,
    /// With `pgbouncer`: the PgBouncer keeps clients' prepared statements (1.21+ with
    /// `max_prepared_statements` > 0), so statements are prepared and cached as on a direct
    /// connection (no statement planned every time). Off: each statement is sent unnamed, which
    /// any PgBouncer takes (Debian 12's 1.18 too).
    pub pgbouncer_prepared_statements: bool,
    /// A direct URL for migrations (and their lock), when `url` goes through PgBouncer; unset:
    /// `url`.
    pub migrate_url: Option<String>,
    /// A streaming replica for read-only work (the assistant's tools, analytics pages and CSV
    /// exports, documentation search); unset: the primary serves everything.
    pub replica_url: Option<String>,
    /// The replica is read from only while its replay lag is under this bound, in milliseconds.
    pub max_replica_lag_ms: u64,
}

impl DatabaseSettings {
    /// `acquire_timeout_ms` as a duration.
    pub fn acquire_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.acquire_timeout_ms)
    }
}

/// `http.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSettings {
    /// Listen address; `--bind` overrides it. Default `0.0.0.0:8080` (`127.0.0.1:8080` for `dev`).
    pub bind: Option<String>,
    /// Worker threads; 0 means one per core.
    pub workers: usize,
    /// Seconds in-flight requests get to finish after SIGTERM.
    pub shutdown_timeout_secs: u64,
    /// The public base URL (`https://wms.example.com`), used in links; default derived from the bind address.
    pub public_url: Option<String>,
    /// Whether the settings pages' cookies carry `Secure` (sent over HTTPS only). Default true,
    /// false in `wms dev` (plain HTTP on a laptop).
    pub secure_cookies: Option<bool>,
}

/// `log.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogSettings {
    /// `human` or `json`; default `json` for `serve`, `human` otherwise.
    pub format: Option<LogFormat>,
    /// A tracing filter such as `info` or `wms=debug,info`; `RUST_LOG` overrides it.
    pub level: String,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// For people at a terminal.
    Human,
    /// One JSON object per line, for collectors.
    Json,
}

/// `rate_limit.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitSettings {
    /// Requests per rolling hour per API key or user token.
    pub requests_per_hour: u32,
}

/// `auth.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSettings {
    /// Lifetime of login tokens, in hours.
    pub token_ttl_hours: u32,
    /// Lifetime of a settings session (the `wms_session` cookie) after sign-in, in hours.
    pub session_ttl_hours: u32,
    /// Password hashes (19 MiB and a core each) computed at once; unset: the number of cores.
    #[serde(default)]
    pub max_concurrent_hashes: Option<usize>,
}

/// `webhooks.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookSettings {
    /// Comma-separated CIDRs that outbound webhooks may reach although private or loopback.
    pub allowed_subnets: Option<String>,
    /// Comma-separated retry delays in seconds.
    pub retry_schedule: String,
    /// Total time a delivery request may take (connect, send, answer, body), in seconds.
    pub timeout_secs: u64,
    /// Delivery loops per instance; 0 runs no delivery in this instance (API only).
    pub workers: usize,
    /// Delivery requests in flight at once per instance.
    pub concurrency: usize,
    /// How often idle delivery loops look for due deliveries, in milliseconds.
    pub poll_interval_ms: u64,
    /// Upper bound of the adaptive pace: deliveries in flight to one destination at once, across
    /// every instance.
    pub max_in_flight_per_destination: u32,
    /// Upper bound of the adaptive pace: deliveries per second to one destination, across every
    /// instance.
    pub rate_per_destination: f64,
    /// How long a manual or test attempt's claim on a delivery lasts (not renewed). Must exceed
    /// `timeout_secs`.
    pub lease_secs: u64,
    /// How long a worker's claim lasts unless its heartbeat renews it (every third of it): a
    /// crashed worker's deliveries are sent again this soon after.
    pub claim_lease_secs: u64,
    /// The longest `Retry-After` (429/503) that is honoured, in seconds.
    pub retry_after_max_secs: u64,
    /// A destination whose deliveries all failed for this long is deactivated, in hours.
    pub auto_disable_after_hours: u64,
    /// Delivery attempts (and finished deliveries) are kept this long, in days.
    pub retention_days: u64,
}

/// `audit.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditSettings {
    /// Audit records are kept this long, in days (1 to 36500); older ones are deleted.
    pub retention_days: u32,
}

/// `co_admin.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoAdminSettings {
    /// Compact the workspace overview when its JSON exceeds about 2 KB.
    pub compress_overview: bool,
    /// Hybrid documentation search when an embeddings provider is configured; the published
    /// `CO_ADMIN_RAG_HYBRID=0` (unprefixed: `docs/search.md`, "Hybrid search") turns it off.
    pub rag_hybrid: bool,
}

/// `embeddings.*` and `rerank.*`: an OpenAI-compatible (or Cohere/Jina-style) provider.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSettings {
    /// Endpoint URL; unset means no provider.
    pub url: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// Bearer key for the provider.
    pub api_key: Option<String>,
    /// How long a search waits for the provider before falling back to full-text, in ms.
    pub timeout_ms: u64,
}

/// `connectors.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectorSettings {
    /// Base URL of Meta's Graph API (a local stand-in in tests and staging).
    pub graph_base_url: String,
    /// Graph API version in the path.
    pub graph_version: String,
    /// Timeout of one send, in seconds.
    pub timeout_secs: u64,
    /// Dispatcher loops per instance (0 disables sending from this instance).
    pub workers: usize,
    /// Messages claimed per loop iteration.
    pub batch_size: i64,
    /// How often an idle dispatcher looks for queued messages, in milliseconds.
    pub poll_interval_ms: u64,
    /// How often each WhatsApp channel's template catalogue is synced from Meta, in minutes.
    pub template_sync_minutes: u64,
}

/// `secrets.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretSettings {
    /// Base64 of 32 bytes that encrypt webhook secrets and channel credentials at rest. Unset: a
    /// key is generated once and kept in the database (a warning says so) — which `serve` only
    /// accepts with `allow_key_in_database`.
    pub encryption_key: Option<String>,
    /// Lets `serve` run without `encryption_key`, keeping the key in the same database as the
    /// ciphertexts (a dump or a replica then decrypts every secret): an explicit choice, never the
    /// default. `wms dev` does not need it.
    pub allow_key_in_database: bool,
    /// Further keys (base64 of 32 bytes each; in the environment, comma-separated) that open
    /// secrets but never seal: the keys of a rotation in progress (see `docs/secrets.md`).
    #[serde(default, deserialize_with = "key_list")]
    pub previous_keys: Vec<String>,
}

/// A list of keys, from a TOML array or one comma-separated string (the environment's form).
fn key_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Keys {
        List(Vec<String>),
        One(String),
    }
    Ok(match Keys::deserialize(d)? {
        Keys::List(v) => v,
        Keys::One(s) => s.split(',').map(str::trim).filter(|k| !k.is_empty()).map(str::to_owned).collect(),
    })
}

/// `dev.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DevSettings {
    /// Where `wms dev` keeps its private PostgreSQL cluster and demo credentials.
    pub data_dir: PathBuf,
    /// Directory of PostgreSQL's server binaries (initdb, pg_ctl); unset: PATH, then
    /// the newest /usr/lib/postgresql/*/bin.
    pub postgres_bin_dir: Option<PathBuf>,
}

/// A setting that is missing or invalid, named.
#[derive(Debug, thiserror::Error)]
#[error("invalid setting `{setting}`: {message}")]
pub struct SettingError {
    /// The setting's dotted name (`http.bind`).
    pub setting: String,
    /// What is wrong.
    pub message: String,
}

/// The first layer: every setting's default, kept as the TOML file an operator would write.
const DEFAULTS: &str = include_str!("config/defaults.toml");

impl Settings {
    /// Loads the layers. `file` comes from `--config` (else `WMS_CONFIG`).
    ///
    /// # Errors
    /// A [`SettingError`] naming the first bad setting.
    pub fn load(file: Option<&Path>) -> Result<Self, SettingError> {
        let mut builder =
            config::Config::builder().add_source(config::File::from_str(DEFAULTS, config::FileFormat::Toml));
        let file = file.map(Path::to_path_buf).or_else(|| std::env::var_os("WMS_CONFIG").map(PathBuf::from));
        if let Some(path) = &file {
            if !path.is_file() {
                return Err(SettingError {
                    setting: "--config".into(),
                    message: format!("no such file: {}", path.display()),
                });
            }
            builder = builder.add_source(config::File::from(path.as_path()).format(config::FileFormat::Toml));
        }
        builder = builder.add_source(config::Environment::with_prefix("WMS").prefix_separator("__").separator("__"));
        // This switch's published name has no WMS__ prefix (`docs/search.md`, "Hybrid search").
        if let Some(v) =
            std::env::var("CO_ADMIN_RAG_HYBRID").ok().map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
        {
            builder =
                builder.set_override("co_admin.rag_hybrid", v != "0").map_err(|e| named("co_admin.rag_hybrid", &e))?;
        }
        if let Some(url) = std::env::var("DATABASE_URL").ok().filter(|u| !u.is_empty()) {
            if std::env::var_os("WMS__DATABASE__URL").is_none() {
                builder = builder.set_override("database.url", url).map_err(|e| named("database.url", &e))?;
            }
        }
        let settings: Settings = builder
            .build()
            .and_then(config::Config::try_deserialize)
            .map_err(|e| SettingError { setting: setting_of(&e), message: e.to_string() })?;
        settings.validate()?;
        Ok(settings)
    }

    /// The built-in defaults alone, ignoring files and the environment (for tests).
    ///
    /// # Errors
    /// Only if the built-in defaults are broken.
    pub fn defaults() -> Result<Self, SettingError> {
        config::Config::builder()
            .add_source(config::File::from_str(DEFAULTS, config::FileFormat::Toml))
            .build()
            .and_then(config::Config::try_deserialize)
            .map_err(|e| SettingError { setting: setting_of(&e), message: e.to_string() })
    }
}

fn named(setting: &str, e: &config::ConfigError) -> SettingError {
    SettingError { setting: setting.into(), message: e.to_string() }
}

/// The setting a config error is about, from its message (`... for key `http.workers` ...`).
fn setting_of(e: &config::ConfigError) -> String {
    let msg = e.to_string();
    if let Some(i) = msg.find("key `") {
        let rest = &msg[i + 5..];
        if let Some(end) = rest.find('`') {
            return rest[..end].to_owned();
        }
    }
    if let Some(i) = msg.find("unknown field `") {
        let rest = &msg[i + 15..];
        if let Some(end) = rest.find('`') {
            return rest[..end].to_owned();
        }
    }
    "configuration".into()
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
