//! Rolling a key: a new key with the same name, scopes and expiry replaces it, and the old one keeps
//! working for a grace period so a deployment can switch over without a window where no key works.

use time::{Duration, OffsetDateTime};

use super::model::{ApiKey, ApiKeyId, ApiKeyState};
use crate::access::ScopeSet;
use crate::common::error::FieldError;

/// The longest grace period: one week.
pub const MAX_GRACE_SECONDS: i64 = 604_800;

/// How long a rolled key keeps working: 0 to [`MAX_GRACE_SECONDS`] seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraceSeconds(i64);

impl GraceSeconds {
    /// Validates a requested grace period.
    ///
    /// # Errors
    /// A [`FieldError`] on `grace_seconds` when missing or out of range.
    pub fn new(raw: Option<i64>) -> Result<Self, FieldError> {
        match raw {
            None => Err(FieldError::new("grace_seconds", "is required (0 to 604800 seconds)")),
            Some(s) if (0..=MAX_GRACE_SECONDS).contains(&s) => Ok(Self(s)),
            Some(_) => Err(FieldError::new("grace_seconds", "must be between 0 and 604800 seconds (one week)")),
        }
    }

    /// The seconds.
    pub fn seconds(self) -> i64 {
        self.0
    }
}

/// Why a key cannot be rolled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RollRefusal {
    /// Revoked (or at the end of an earlier roll's grace period): nothing to replace.
    #[error("the key is revoked: create a new key instead")]
    Revoked,
    /// Past its expiry: nothing to replace.
    #[error("the key has expired: create a new key instead")]
    Expired,
    /// Rolled already, to the key named: roll that one instead.
    #[error("the key was already rolled to key {0}: roll that key instead")]
    AlreadyRolled(ApiKeyId),
}

/// What a roll changes: the successor's fields and when the old key stops working.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RollPlan {
    /// The successor's name (the old key's).
    pub name: String,
    /// The successor's scopes (the old key's).
    pub scopes: ScopeSet,
    /// The successor's expiry (the old key's).
    pub expires_at: Option<OffsetDateTime>,
    /// When the old key is revoked: the end of the grace period.
    pub old_key_revoked_at: OffsetDateTime,
}

/// Decides a roll of `key` at `now`: only an active key that was not rolled before may be rolled
/// (rolling one twice would leave two successors of one key alive). The old key is revoked at
/// `now + grace`; with a grace of 0 it stops at once.
///
/// # Errors
/// [`RollRefusal`].
pub fn plan_roll(key: &ApiKey, now: OffsetDateTime, grace: GraceSeconds) -> Result<RollPlan, RollRefusal> {
    match key.state(now) {
        ApiKeyState::Revoked => return Err(RollRefusal::Revoked),
        ApiKeyState::Expired => return Err(RollRefusal::Expired),
        ApiKeyState::Active => {}
    }
    if let Some(successor) = key.rolled_to {
        return Err(RollRefusal::AlreadyRolled(successor));
    }
    Ok(RollPlan {
        name: key.name.clone(),
        scopes: key.scopes,
        expires_at: key.expires_at,
        old_key_revoked_at: now + Duration::seconds(grace.seconds()),
    })
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use crate::workspace::WorkspaceId;

    fn key() -> ApiKey {
        ApiKey {
            id: ApiKeyId(1),
            workspace_id: WorkspaceId(1),
            name: "ci".into(),
            masked_key: "wmsk_…abcd".into(),
            created_by: None,
            created_at: datetime!(2026-01-01 0:00 UTC),
            expires_at: Some(datetime!(2027-01-01 0:00 UTC)),
            last_used_at: None,
            last_used_ip: None,
            revoked_at: None,
            rolled_to: None,
            scopes: ScopeSet::parse_request(Some(&["messages:read".to_owned()])).expect("scope"),
        }
    }

    const NOW: OffsetDateTime = datetime!(2026-06-01 0:00 UTC);

    #[test]
    fn the_successor_keeps_name_scopes_and_expiry_and_the_old_key_ends_with_the_grace() {
        let plan = plan_roll(&key(), NOW, GraceSeconds::new(Some(3600)).expect("grace")).expect("plan");
        assert_eq!(plan.name, "ci");
        assert_eq!(plan.scopes, key().scopes);
        assert_eq!(plan.expires_at, key().expires_at);
        assert_eq!(plan.old_key_revoked_at, datetime!(2026-06-01 1:00 UTC));
        let now = plan_roll(&key(), NOW, GraceSeconds::new(Some(0)).expect("grace")).expect("plan");
        assert_eq!(now.old_key_revoked_at, NOW);
    }

    #[test]
    fn revoked_expired_and_rolled_keys_are_not_rolled() {
        let grace = GraceSeconds::new(Some(60)).expect("grace");
        let revoked = ApiKey { revoked_at: Some(NOW), ..key() };
        assert_eq!(plan_roll(&revoked, NOW, grace), Err(RollRefusal::Revoked));
        let expired = ApiKey { expires_at: Some(NOW), ..key() };
        assert_eq!(plan_roll(&expired, NOW, grace), Err(RollRefusal::Expired));
        // In its grace period a rolled key is still active, but it has its successor already.
        let rolled = ApiKey { revoked_at: Some(NOW + Duration::hours(1)), rolled_to: Some(ApiKeyId(2)), ..key() };
        assert_eq!(rolled.state(NOW), ApiKeyState::Active);
        assert_eq!(plan_roll(&rolled, NOW, grace), Err(RollRefusal::AlreadyRolled(ApiKeyId(2))));
    }

    #[test]
    fn the_grace_is_zero_to_one_week() {
        assert_eq!(GraceSeconds::new(Some(0)).map(GraceSeconds::seconds), Ok(0));
        assert_eq!(GraceSeconds::new(Some(604_800)).map(GraceSeconds::seconds), Ok(604_800));
        for bad in [Some(-1), Some(604_801), None] {
            assert_eq!(GraceSeconds::new(bad).map_err(|e| e.field), Err("grace_seconds".to_owned()));
        }
    }
}
