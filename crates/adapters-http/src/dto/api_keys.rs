//! The record of the settings API for API keys, and what a change to one key reads.

use domain::access::Caller;
use domain::api_keys::{ApiKey, ApiKeyId};
use domain::audit::AuditContext;
use serde::Serialize;
use time::OffsetDateTime;

/// A revoke, roll or delete of one key (the settings API's [`crate::handlers::api_keys`] and the key
/// page's buttons): the member asking, from where, and the key of the path.
#[derive(Debug)]
pub struct KeyChange {
    /// The member asking.
    pub caller: Caller,
    /// Who asks, from where: for the audit record.
    pub audit: AuditContext,
    /// The key of the path.
    pub key: ApiKeyId,
}

/// A key as listed: never the key itself (`docs/contract.md`, "Settings API and pages").
#[derive(Debug, Serialize)]
pub struct ApiKeyRecord {
    /// Key id.
    pub id: i64,
    /// Its label.
    pub name: String,
    /// `wmsk_…` and the last four characters.
    pub masked_key: String,
    /// `active`, `revoked` or `expired`.
    pub state: &'static str,
    /// When it was created.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When it stops working, if ever.
    #[serde(with = "time::serde::rfc3339::option")]
    pub expires_at: Option<OffsetDateTime>,
    /// When it last authenticated a request (to about a minute).
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_used_at: Option<OffsetDateTime>,
    /// The client address of a request it authenticated, recorded with `last_used_at`.
    pub last_used_ip: Option<String>,
    /// When it was revoked; for a rolled key in its grace period, when it will be.
    #[serde(with = "time::serde::rfc3339::option")]
    pub revoked_at: Option<OffsetDateTime>,
    /// The key that replaced it, once rolled.
    pub rolled_to: Option<i64>,
    /// The scopes as granted (every scope for a full-access key; implied reads not added).
    pub scopes: Vec<&'static str>,
}

impl ApiKeyRecord {
    /// The record of `key`, its state as of `now`.
    pub fn new(key: ApiKey, now: OffsetDateTime) -> Self {
        Self {
            state: key.state(now).as_str(),
            id: key.id.0,
            name: key.name,
            masked_key: key.masked_key,
            created_at: key.created_at,
            expires_at: key.expires_at,
            last_used_at: key.last_used_at,
            last_used_ip: key.last_used_ip,
            revoked_at: key.revoked_at,
            rolled_to: key.rolled_to.map(|k| k.0),
            scopes: key.scopes.names(),
        }
    }
}

/// A new key's record and, this once, the full key: the answer of a creation and of a roll (the
/// successor), which no cache may keep.
#[derive(Serialize)]
pub struct KeyWithSecret {
    /// The key's record.
    #[serde(flatten)]
    pub record: ApiKeyRecord,
    /// The full key.
    pub key: String,
}
