//! A membership as storage reads it, for the identity path to turn into a [`Caller`].

use time::{Duration, OffsetDateTime};

use crate::access::{Actor, Caller, Surface};
use crate::users::{Role, UserId};
use crate::workspace::{PlanTier, WorkspaceId};

/// An active membership of an active workspace as stored (a session's member, an OAuth grant's
/// member): facts, not a caller. The identity path turns it into the one [`Caller`]
/// ([`WorkspaceMember::caller`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkspaceMember {
    /// The workspace.
    pub workspace_id: WorkspaceId,
    /// Its plan.
    pub plan: PlanTier,
    /// The user.
    pub user_id: UserId,
    /// Their role.
    pub role: Role,
}

impl WorkspaceMember {
    /// The member acting through `surface`.
    pub fn caller(self, surface: Surface) -> Caller {
        Caller {
            workspace_id: self.workspace_id,
            plan: self.plan,
            actor: Actor::Member { user_id: self.user_id, role: self.role },
            surface,
        }
    }
}

/// How precisely a credential's last use is kept: to the minute, so a busy credential costs one
/// write a minute, not one a request (keys and login tokens in `wms_authenticate`, OAuth grants
/// in their own check).
pub const LAST_USE_PRECISION: Duration = Duration::minutes(1);

/// Whether a credential last used at `last` (never: `None`) records a use at `now`.
pub fn records_use(last: Option<OffsetDateTime>, now: OffsetDateTime) -> bool {
    last.is_none_or(|t| t < now - LAST_USE_PRECISION)
}

#[cfg(test)]
mod last_use_tests {
    use time::macros::datetime;

    use super::*;

    #[test]
    fn a_use_is_recorded_at_most_once_a_minute() {
        let now = datetime!(2026-06-01 12:00 UTC);
        assert!(records_use(None, now));
        assert!(!records_use(Some(now - Duration::seconds(59)), now));
        assert!(!records_use(Some(now - LAST_USE_PRECISION), now), "exactly a minute ago is still fresh");
        assert!(records_use(Some(now - Duration::seconds(61)), now));
    }
}
