//! Revoking a key: the record stays (`docs/api-keys.md`); a second revocation keeps the first time,
//! and a rolled key whose revocation lies in the future (its grace) is revoked now instead.

use time::OffsetDateTime;

/// What a revocation at some instant writes on a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Revocation {
    /// The key's `revoked_at` afterwards: the earlier of the one it had and the revocation's.
    pub revoked_at: OffsetDateTime,
    /// Whether the revocation took effect (the key worked until now), which alone is recorded.
    pub recorded: bool,
}

/// The revocation at `at` of a key whose `revoked_at` was `before` (read with the key locked).
pub fn decide_revocation(before: Option<OffsetDateTime>, at: OffsetDateTime) -> Revocation {
    match before {
        Some(b) if b <= at => Revocation { revoked_at: b, recorded: false },
        _ => Revocation { revoked_at: at, recorded: true },
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;
    use time::Duration;

    use super::{decide_revocation, Revocation};

    const AT: time::OffsetDateTime = datetime!(2026-11-27 10:00 UTC);

    #[test]
    fn a_working_key_is_revoked_now_and_recorded() {
        assert_eq!(decide_revocation(None, AT), Revocation { revoked_at: AT, recorded: true });
    }

    #[test]
    fn a_second_revocation_keeps_the_first_time_and_is_not_recorded() {
        let first = AT - Duration::hours(1);
        assert_eq!(decide_revocation(Some(first), AT), Revocation { revoked_at: first, recorded: false });
        assert_eq!(decide_revocation(Some(AT), AT), Revocation { revoked_at: AT, recorded: false });
    }

    #[test]
    fn a_rolled_key_in_its_grace_is_revoked_now() {
        let end_of_grace = AT + Duration::days(1);
        assert_eq!(decide_revocation(Some(end_of_grace), AT), Revocation { revoked_at: AT, recorded: true });
    }
}
