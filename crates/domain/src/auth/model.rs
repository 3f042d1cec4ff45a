//! A membership as storage reads it, for the identity path to turn into a [`Caller`].

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
