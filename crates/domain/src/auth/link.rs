//! One-time links: an invitation or a password-reset link carries a `wmsu_` token that works once,
//! until it expires. Using, voiding and leaking one all read the same rule.

use time::OffsetDateTime;

/// A one-time link as stored: when it stops working by itself, and when it was used (or voided).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OneTimeLink {
    /// When the link stops working by itself.
    pub expires_at: OffsetDateTime,
    /// When it was used or voided, if it was.
    pub used_at: Option<OffsetDateTime>,
}

impl OneTimeLink {
    /// Whether the link still works at `now`: never used or voided, and not yet expired (it stops
    /// working at its expiry instant).
    pub fn is_open(&self, now: OffsetDateTime) -> bool {
        self.used_at.is_none() && now < self.expires_at
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;
    use time::Duration;

    use super::*;

    const NOW: OffsetDateTime = datetime!(2026-05-01 12:00 UTC);

    #[test]
    fn an_unused_link_works_until_its_expiry_instant() {
        let link = OneTimeLink { expires_at: NOW + Duration::seconds(1), used_at: None };
        assert!(link.is_open(NOW));
        assert!(!link.is_open(NOW + Duration::seconds(1)), "not at the expiry instant");
        assert!(!link.is_open(NOW + Duration::hours(1)));
    }

    #[test]
    fn a_used_link_never_works_again() {
        let link = OneTimeLink { expires_at: NOW + Duration::hours(1), used_at: Some(NOW - Duration::minutes(1)) };
        assert!(!link.is_open(NOW));
    }
}
