//! API key entities and values.

use std::fmt;

use time::OffsetDateTime;

use crate::access::ScopeSet;
use crate::auth::NewToken;
use crate::common::error::FieldError;
use crate::common::text::bounded;
use crate::users::UserId;
use crate::workspace::WorkspaceId;

/// An API key's database id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct ApiKeyId(pub i64);

impl fmt::Display for ApiKeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A key's label: 1..=100 characters, trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeyName(String);

impl ApiKeyName {
    /// Validates a name.
    ///
    /// # Errors
    /// A [`FieldError`] on `name` when blank, longer than 100 characters or with control characters.
    pub fn new(raw: &str) -> Result<Self, FieldError> {
        bounded("name", raw, 1, 100).map(Self)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// When a new key stops working: a time in the future.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyExpiry(OffsetDateTime);

impl KeyExpiry {
    /// Parses an RFC 3339 timestamp that must be later than `now`; kept in UTC at microsecond
    /// precision, the precision it is stored at.
    ///
    /// # Errors
    /// A [`FieldError`] on `expires_at`.
    pub fn parse(raw: &str, now: OffsetDateTime) -> Result<Self, FieldError> {
        let at = crate::common::instant::parse_rfc3339(raw)
            .ok_or_else(|| FieldError::new("expires_at", crate::common::instant::EXPECTED))?;
        let at = at.replace_nanosecond(at.nanosecond() / 1000 * 1000).unwrap_or(at);
        if at <= now {
            return Err(FieldError::new("expires_at", "must be in the future"));
        }
        Ok(Self(at))
    }

    /// The instant.
    pub fn at(self) -> OffsetDateTime {
        self.0
    }
}

/// A key's state (`docs/auth.md`, "Settings API for keys").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiKeyState {
    /// Works.
    Active,
    /// Revoked by an admin; the record is kept.
    Revoked,
    /// Past its `expires_at`.
    Expired,
}

impl ApiKeyState {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiKeyState::Active => "active",
            ApiKeyState::Revoked => "revoked",
            ApiKeyState::Expired => "expired",
        }
    }
}

/// An API key as stored: never the key itself, only its masked form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    /// Its id.
    pub id: ApiKeyId,
    /// Its workspace.
    pub workspace_id: WorkspaceId,
    /// Its label.
    pub name: String,
    /// `wmsk_…` and the last four characters.
    pub masked_key: String,
    /// Who created it, while that user exists.
    pub created_by: Option<UserId>,
    /// When it was created.
    pub created_at: OffsetDateTime,
    /// When it stops working, if ever.
    pub expires_at: Option<OffsetDateTime>,
    /// When it last authenticated a request (recorded at most about once a minute).
    pub last_used_at: Option<OffsetDateTime>,
    /// The client address of a request it authenticated, recorded with `last_used_at`.
    pub last_used_ip: Option<String>,
    /// When it was revoked, or (a rolled key in its grace period) when it will be.
    pub revoked_at: Option<OffsetDateTime>,
    /// The key that replaced it, when it was rolled.
    pub rolled_to: Option<ApiKeyId>,
    /// What it was granted (every scope for a full-access key).
    pub scopes: ScopeSet,
}

impl ApiKey {
    /// The state at `now`. A revoked key stays revoked after its expiry: revocation is the
    /// decision a person made and the one the record should show. A rolled key's revocation lies
    /// in the future until its grace period ends; until then it is what it would be without it.
    pub fn state(&self, now: OffsetDateTime) -> ApiKeyState {
        if self.revoked_at.is_some_and(|r| r <= now) {
            ApiKeyState::Revoked
        } else if self.expires_at.is_some_and(|e| e <= now) {
            ApiKeyState::Expired
        } else {
            ApiKeyState::Active
        }
    }
}

/// The result of creating a key: the record and the full key, which exists only here.
#[derive(Debug)]
pub struct CreatedApiKey {
    /// The stored record.
    pub key: ApiKey,
    /// The full key, to show once.
    pub secret: NewToken,
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    fn key() -> ApiKey {
        ApiKey {
            id: ApiKeyId(1),
            workspace_id: WorkspaceId(1),
            name: "ci".into(),
            masked_key: "wmsk_…abcd".into(),
            created_by: None,
            created_at: datetime!(2026-01-01 0:00 UTC),
            expires_at: None,
            last_used_at: None,
            last_used_ip: None,
            revoked_at: None,
            rolled_to: None,
            scopes: ScopeSet::full(),
        }
    }

    #[test]
    fn states_follow_revocation_and_expiry() {
        let now = datetime!(2026-06-01 0:00 UTC);
        assert_eq!(key().state(now), ApiKeyState::Active);
        let expiring = ApiKey { expires_at: Some(now), ..key() };
        assert_eq!(expiring.state(now), ApiKeyState::Expired);
        assert_eq!(expiring.state(now - time::Duration::seconds(1)), ApiKeyState::Active);
        let revoked = ApiKey { revoked_at: Some(now), expires_at: Some(now), ..key() };
        assert_eq!(revoked.state(now + time::Duration::days(1)), ApiKeyState::Revoked);
        let rolling = ApiKey { revoked_at: Some(now + time::Duration::hours(1)), ..key() };
        assert_eq!(rolling.state(now), ApiKeyState::Active);
        assert_eq!(rolling.state(now + time::Duration::hours(1)), ApiKeyState::Revoked);
    }

    #[test]
    fn expiry_must_be_a_future_rfc3339_time() {
        let now = datetime!(2026-06-01 0:00 UTC);
        assert_eq!(
            KeyExpiry::parse("2026-06-01T02:00:00+02:00", now).map(KeyExpiry::at).map_err(|e| e.field),
            Err("expires_at".to_owned())
        );
        assert_eq!(
            KeyExpiry::parse("2026-06-02T02:00:00.1234567+02:00", now).map(KeyExpiry::at),
            Ok(datetime!(2026-06-02 0:00:00.123456 UTC))
        );
        assert!(KeyExpiry::parse("tomorrow", now).is_err());
        assert!(KeyExpiry::parse("2026-05-31T23:59:59Z", now).is_err());
    }

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(ApiKeyName::new("  CI deploy ").map(|n| n.0), Ok("CI deploy".to_owned()));
        assert!(ApiKeyName::new("  ").is_err());
        assert!(ApiKeyName::new(&"x".repeat(101)).is_err());
        assert!(ApiKeyName::new(&"é".repeat(100)).is_ok());
    }
}
