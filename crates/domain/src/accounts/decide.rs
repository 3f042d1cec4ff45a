//! The rules of a password reset over what the storage reads inside its transaction (facts →
//! decision → apply): a link works once, until it expires, and using it changes the password and
//! signs the account out everywhere.

use time::OffsetDateTime;

use crate::auth::OneTimeLink;
use crate::common::ports::PasswordHash;
use crate::users::UserId;

/// An account found by its address, as a reset request reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResetAccount {
    /// The account.
    pub user_id: UserId,
    /// Whether it has a password: only such an account gets a reset link (one that never chose a
    /// password accepts an invitation instead).
    pub has_password: bool,
}

/// A reset link as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResetLinkFacts {
    /// The account it resets.
    pub user_id: UserId,
    /// The account's address, as stored.
    pub email: String,
    /// When it expires, and when it was used or voided.
    pub link: OneTimeLink,
}

/// What completing a reset writes, in one transaction: the account's new password; every reset
/// link of the account used up (this one included), and every login token and settings session
/// of the account revoked, all at `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasswordResetCompletion {
    /// The account.
    pub user_id: UserId,
    /// When.
    pub at: OffsetDateTime,
    /// Its new password, hashed.
    pub password: PasswordHash,
}

/// Decides completing the reset of `facts` (read with the link locked, so that of two concurrent
/// submissions one finds it used) at `now` with the new `password`. `None`: the link no longer
/// works, nothing changes.
pub fn decide_reset(
    facts: &ResetLinkFacts,
    now: OffsetDateTime,
    password: PasswordHash,
) -> Option<PasswordResetCompletion> {
    facts.link.is_open(now).then_some(PasswordResetCompletion { user_id: facts.user_id, at: now, password })
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;
    use time::Duration;

    use super::*;

    const NOW: OffsetDateTime = datetime!(2026-06-01 12:00 UTC);

    fn link(used_at: Option<OffsetDateTime>, expires_at: OffsetDateTime) -> ResetLinkFacts {
        ResetLinkFacts {
            user_id: UserId(4),
            email: "owner@example.com".into(),
            link: OneTimeLink { expires_at, used_at },
        }
    }

    #[test]
    fn an_open_link_sets_the_password_and_signs_the_account_out_now() {
        let hash = PasswordHash("$argon2id$new".into());
        assert_eq!(
            decide_reset(&link(None, NOW + Duration::minutes(30)), NOW, hash.clone()),
            Some(PasswordResetCompletion { user_id: UserId(4), at: NOW, password: hash })
        );
    }

    #[test]
    fn a_used_or_expired_link_changes_nothing() {
        let hash = || PasswordHash("$argon2id$new".into());
        assert_eq!(
            decide_reset(&link(Some(NOW - Duration::seconds(1)), NOW + Duration::minutes(30)), NOW, hash()),
            None
        );
        assert_eq!(decide_reset(&link(None, NOW), NOW, hash()), None);
    }
}
