//! Checking the loaded settings: each bad value is refused with the setting it is about.

use std::net::SocketAddr;

use domain::webhooks::ssrf::Cidr;

use super::{SettingError, Settings};

impl Settings {
    pub(super) fn validate(&self) -> Result<(), SettingError> {
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
        let keys_url = self.secret_scanning.github_keys_url.trim();
        if reqwest::Url::parse(keys_url).map_or(true, |u| !matches!(u.scheme(), "http" | "https") || u.host().is_none())
        {
            return bad("secret_scanning.github_keys_url", "must be an http:// or https:// URL");
        }
        let w = &self.webhooks;
        if w.timeout_secs == 0 || w.timeout_secs > 300 {
            return bad("webhooks.timeout_secs", "must be between 1 and 300");
        }
        if w.lease_secs < w.timeout_secs + 5 {
            return bad("webhooks.lease_secs", "must exceed webhooks.timeout_secs by at least 5 seconds");
        }
        if !(2..=60).contains(&w.claim_lease_secs) {
            return bad("webhooks.claim_lease_secs", "must be between 2 and 60");
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
        if !(1..=10_080).contains(&self.connectors.template_sync_minutes) {
            return bad("connectors.template_sync_minutes", "must be between 1 and 10080 (a week)");
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
        self.validate_mail()?;
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

impl Settings {
    /// `mail.*`: the URL and sender are parsed the way the SMTP transport parses them.
    fn validate_mail(&self) -> Result<(), SettingError> {
        let bad = |setting: &str, message: &str| Err(SettingError { setting: setting.into(), message: message.into() });
        let m = &self.mail;
        if let Some(url) = m.smtp_url.as_deref().filter(|u| !u.trim().is_empty()) {
            adapters_outbound::smtp::SmtpServer::parse(url)
                .map_err(|e| SettingError { setting: e.setting.into(), message: e.message })?;
        }
        adapters_outbound::smtp::parse_from(&m.from)
            .map_err(|e| SettingError { setting: e.setting.into(), message: e.message })?;
        if parse_retry_schedule(&m.retry_schedule).is_none() {
            return bad("mail.retry_schedule", "must be comma-separated whole seconds, such as 10,60,300");
        }
        if m.give_up_after_hours == Some(0) {
            return bad("mail.give_up_after_hours", "must be at least 1");
        }
        if m.timeout_secs == 0 || m.timeout_secs > 300 {
            return bad("mail.timeout_secs", "must be between 1 and 300");
        }
        if m.lease_secs < m.timeout_secs + 5 {
            return bad("mail.lease_secs", "must exceed mail.timeout_secs by at least 5 seconds");
        }
        if m.poll_interval_ms == 0 || m.poll_interval_ms > 60_000 {
            return bad("mail.poll_interval_ms", "must be between 1 and 60000");
        }
        if m.workers > 16 {
            return bad("mail.workers", "must be at most 16");
        }
        if m.retention_days == 0 {
            return bad("mail.retention_days", "must be at least 1");
        }
        Ok(())
    }
}
