//! Layered configuration: built-in defaults, then an optional TOML file (`--config` or
//! `WMS_CONFIG`), then `WMS__SECTION__KEY` environment variables, then `DATABASE_URL`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use domain::webhooks::ssrf::Cidr;
use serde::Deserialize;

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
    /// a transaction (advisory locks are transaction-scoped) and migrations take `migrate_url`.
    pub pgbouncer: bool,
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
    /// Deliveries in flight to one destination at once, across every instance.
    pub max_in_flight_per_destination: u32,
    /// Sustained deliveries per second to one destination, across every instance (also the burst).
    pub rate_per_destination: f64,
    /// How long a worker's claim on a delivery lasts; a crashed worker's deliveries are sent
    /// again after it. Must exceed `timeout_secs`.
    pub lease_secs: u64,
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
    /// Hybrid documentation search when an embeddings provider is configured; the spec's
    /// `CO_ADMIN_RAG_HYBRID=0` (unprefixed) turns it off.
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

const DEFAULTS: &str = r#"
[database]
pool_size = 16
connect_timeout_secs = 30
migrate_on_start = true
acquire_timeout_ms = 2000
pgbouncer = false
max_replica_lag_ms = 2000

[http]
workers = 0
shutdown_timeout_secs = 30

[log]
level = "info"

[rate_limit]
requests_per_hour = 1000

[auth]
token_ttl_hours = 24
session_ttl_hours = 12

[webhooks]
retry_schedule = "5,300,1800,7200,18000,36000,36000"
timeout_secs = 15
workers = 2
concurrency = 128
poll_interval_ms = 100
max_in_flight_per_destination = 20
rate_per_destination = 250.0
lease_secs = 60
retry_after_max_secs = 86400
auto_disable_after_hours = 120
retention_days = 30

[audit]
retention_days = 365

[co_admin]
compress_overview = false
rag_hybrid = true

[embeddings]
timeout_ms = 2000

[rerank]
timeout_ms = 2000

[secrets]
allow_key_in_database = false

[connectors]
graph_base_url = "https://graph.facebook.com"
graph_version = "v21.0"
timeout_secs = 15
workers = 2
batch_size = 20
poll_interval_ms = 500

[dev]
data_dir = ".wms"
"#;

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
        // Spec 4.3 names this switch without the WMS__ prefix.
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

    fn validate(&self) -> Result<(), SettingError> {
        let bad = |setting: &str, message: &str| Err(SettingError { setting: setting.into(), message: message.into() });
        if let Some(b) = &self.http.bind {
            parse_bind("http.bind", b)?;
        }
        if let Some(b) = &self.metrics.bind {
            parse_bind("metrics.bind", b)?;
        }
        if self.database.pool_size == 0 || self.database.pool_size > 1000 {
            return bad("database.pool_size", "must be between 1 and 1000");
        }
        if !(50..=600_000).contains(&self.database.acquire_timeout_ms) {
            return bad("database.acquire_timeout_ms", "must be between 50 and 600000 (milliseconds)");
        }
        for (name, url) in [
            ("database.url", &self.database.url),
            ("database.migrate_url", &self.database.migrate_url),
            ("database.replica_url", &self.database.replica_url),
        ] {
            if let Some(url) = url {
                if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
                    return bad(name, "must be a postgres:// or postgresql:// URL");
                }
            }
        }
        if self.database.pgbouncer && self.database.migrate_on_start && self.database.migrate_url.is_none() {
            return bad(
                "database.migrate_url",
                "must be set when database.pgbouncer = true and migrate_on_start is: migrations need a direct connection",
            );
        }
        if !(10..=3_600_000).contains(&self.database.max_replica_lag_ms) {
            return bad("database.max_replica_lag_ms", "must be between 10 and 3600000 (milliseconds)");
        }
        if self.rate_limit.requests_per_hour == 0 {
            return bad("rate_limit.requests_per_hour", "must be at least 1");
        }
        if self.auth.token_ttl_hours == 0 || self.auth.token_ttl_hours > 24 * 365 {
            return bad("auth.token_ttl_hours", "must be between 1 and 8760");
        }
        if self.auth.session_ttl_hours == 0 || self.auth.session_ttl_hours > 24 * 30 {
            return bad("auth.session_ttl_hours", "must be between 1 and 720");
        }
        if self.auth.max_concurrent_hashes.is_some_and(|n| n == 0 || n > 1024) {
            return bad("auth.max_concurrent_hashes", "must be between 1 and 1024");
        }
        for (name, p) in [("embeddings", &self.embeddings), ("rerank", &self.rerank)] {
            if p.timeout_ms == 0 || p.timeout_ms > 60_000 {
                return bad(&format!("{name}.timeout_ms"), "must be between 1 and 60000");
            }
        }
        if self.embeddings.url.is_some() && self.embeddings.model.as_deref().unwrap_or("").is_empty() {
            return bad("embeddings.model", "must be set when embeddings.url is (the model stored with each vector)");
        }
        let w = &self.webhooks;
        if w.timeout_secs == 0 || w.timeout_secs > 300 {
            return bad("webhooks.timeout_secs", "must be between 1 and 300");
        }
        if w.lease_secs < w.timeout_secs + 5 {
            return bad("webhooks.lease_secs", "must exceed webhooks.timeout_secs by at least 5 seconds");
        }
        if w.concurrency == 0 || w.concurrency > 10_000 {
            return bad("webhooks.concurrency", "must be between 1 and 10000");
        }
        if w.poll_interval_ms == 0 || w.poll_interval_ms > 60_000 {
            return bad("webhooks.poll_interval_ms", "must be between 1 and 60000");
        }
        if w.max_in_flight_per_destination == 0 {
            return bad("webhooks.max_in_flight_per_destination", "must be at least 1");
        }
        if !(w.rate_per_destination.is_finite() && w.rate_per_destination >= 0.01) {
            return bad("webhooks.rate_per_destination", "must be at least 0.01 (deliveries per second)");
        }
        if w.auto_disable_after_hours == 0 {
            return bad("webhooks.auto_disable_after_hours", "must be at least 1");
        }
        if w.retention_days == 0 {
            return bad("webhooks.retention_days", "must be at least 1");
        }
        if !(1..=36_500).contains(&self.audit.retention_days) {
            return bad("audit.retention_days", "must be between 1 and 36500 (days)");
        }
        if parse_retry_schedule(&self.webhooks.retry_schedule).is_none() {
            return bad("webhooks.retry_schedule", "must be comma-separated whole seconds, such as 5,300,1800");
        }
        if let Some(subnets) = &self.webhooks.allowed_subnets {
            for s in subnets.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                // The parser the SSRF policy is built with, so what passes here is what it allows.
                if Cidr::parse(s).is_none() {
                    return bad(
                        "webhooks.allowed_subnets",
                        &format!("`{s}` is not a CIDR such as 127.0.0.0/8 or ::1/128, nor an IP address"),
                    );
                }
            }
        }
        let graph = &self.connectors.graph_base_url;
        if !(graph.starts_with("https://") || graph.starts_with("http://")) || graph.len() < 10 {
            return bad("connectors.graph_base_url", "must be an http(s) URL such as https://graph.facebook.com");
        }
        if !self.connectors.graph_version.starts_with('v') || self.connectors.graph_version.len() > 10 {
            return bad("connectors.graph_version", "must be a Graph API version such as v21.0");
        }
        if self.connectors.timeout_secs == 0 || self.connectors.timeout_secs > 120 {
            return bad("connectors.timeout_secs", "must be between 1 and 120");
        }
        if !(1..=500).contains(&self.connectors.batch_size) {
            return bad("connectors.batch_size", "must be between 1 and 500");
        }
        if self.connectors.workers > 64 {
            return bad("connectors.workers", "must be at most 64");
        }
        if let Some(k) = &self.secrets.encryption_key {
            if crate::secrets::decode_key(k).is_none() {
                return bad(
                    "secrets.encryption_key",
                    "must be the base64 of exactly 32 bytes (`openssl rand -base64 32`)",
                );
            }
        }
        if self.secrets.previous_keys.iter().any(|k| crate::secrets::decode_key(k).is_none()) {
            return bad("secrets.previous_keys", "each must be the base64 of exactly 32 bytes");
        }
        Ok(())
    }
}

/// Parses a `HOST:PORT` listen address.
///
/// # Errors
/// A [`SettingError`] naming `setting`.
pub fn parse_bind(setting: &str, raw: &str) -> Result<SocketAddr, SettingError> {
    raw.trim().parse().map_err(|_| SettingError {
        setting: setting.into(),
        message: format!("`{raw}` is not a HOST:PORT address such as 127.0.0.1:8080"),
    })
}

/// Retry delays in seconds, or `None` when malformed or empty.
pub fn parse_retry_schedule(raw: &str) -> Option<Vec<u64>> {
    let v: Option<Vec<u64>> = raw.split(',').map(|s| s.trim().parse().ok()).collect();
    v.filter(|v| !v.is_empty())
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
mod tests {
    use domain::webhooks::ssrf::AddressPolicy;

    use super::*;

    #[test]
    fn cidrs_parse() {
        assert!(Cidr::parse("127.0.0.0/8").is_some());
        assert!(Cidr::parse("::1/128").is_some());
        assert!(Cidr::parse("10.0.0.0/33").is_none());
        assert!(Cidr::parse("localhost/8").is_none());
    }

    fn with_allowed_subnets(raw: &str) -> Result<(), SettingError> {
        let mut settings = Settings::defaults().expect("defaults");
        settings.webhooks.allowed_subnets = Some(raw.to_owned());
        settings.validate()
    }

    #[test]
    fn a_malformed_allowed_subnet_is_refused_naming_the_setting_and_the_entry() {
        for bad in ["10.0.0.0/33", "::1/129", "localhost/8", "10.0.0.0/", "10.0.0/8"] {
            let err = with_allowed_subnets(&format!("127.0.0.0/8, {bad}")).expect_err(bad);
            assert_eq!(err.setting, "webhooks.allowed_subnets", "{bad}");
            assert!(err.message.contains(&format!("`{bad}`")), "{bad}: {}", err.message);
        }
    }

    #[test]
    fn allowed_subnets_accept_what_the_address_policy_accepts() {
        let raw = "127.0.0.0/8, ::1/128,10.1.2.3, 192.168.0.0/16";
        assert!(with_allowed_subnets(raw).is_ok());
        assert!(AddressPolicy::from_setting(Some(raw)).is_some());
    }

    #[test]
    fn co_admin_rag_hybrid_zero_turns_hybrid_search_off() {
        // The only test that touches this variable, and no other test loads settings from the
        // environment, so setting it here cannot race.
        std::env::set_var("CO_ADMIN_RAG_HYBRID", "0");
        let off = Settings::load(None).map(|s| s.co_admin.rag_hybrid);
        std::env::set_var("CO_ADMIN_RAG_HYBRID", "1");
        let on = Settings::load(None).map(|s| s.co_admin.rag_hybrid);
        std::env::remove_var("CO_ADMIN_RAG_HYBRID");
        let default = Settings::load(None).map(|s| s.co_admin.rag_hybrid);
        assert_eq!((off.ok(), on.ok(), default.ok()), (Some(false), Some(true), Some(true)));
    }

    #[test]
    fn retry_schedule_parses() {
        assert_eq!(parse_retry_schedule("5, 300,1800"), Some(vec![5, 300, 1800]));
        assert_eq!(parse_retry_schedule("5,soon"), None);
        assert_eq!(parse_retry_schedule(""), None);
    }
}
