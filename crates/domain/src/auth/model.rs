//! A membership as storage reads it, for the identity path to turn into a [`Caller`].

use time::{Duration, OffsetDateTime};

use crate::access::{Actor, Caller, Surface};
use crate::users::{Role, UserId};
use crate::workspace::{PlanTier, WorkspaceId};

/// A membership that counts ([`Standing::counts`]; a session's member, an OAuth grant's member):
/// facts, not a caller. The identity path turns it into the one [`Caller`]
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

/// Whether a stored membership counts: the member and their workspace are both active. The one
/// rule for every way in (sign-in, a session's workspace and each of its requests, an OAuth
/// consent and its grant's tokens); storage reads the two flags and never decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// The member has not been deactivated.
    pub member_active: bool,
    /// The workspace has not been switched off.
    pub workspace_active: bool,
}

impl Standing {
    /// Both active.
    pub const ACTIVE: Self = Self { member_active: true, workspace_active: true };

    /// Whether the membership counts.
    pub fn counts(self) -> bool {
        self.member_active && self.workspace_active
    }
}

/// A membership as stored, whatever its standing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredMember {
    /// The membership.
    pub member: WorkspaceMember,
    /// Whether it counts.
    pub standing: Standing,
}

impl StoredMember {
    /// The membership, when it counts ([`Standing::counts`]).
    pub fn counting(self) -> Option<WorkspaceMember> {
        self.standing.counts().then_some(self.member)
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
