//! Who a verified credential belongs to.

use crate::access::ScopeSet;
use crate::users::{Role, UserId};
use crate::workspace::{PlanTier, WorkspaceId};

/// The owner of a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialOwner {
    /// A workspace API key.
    ApiKey {
        /// The key's id.
        key_id: i64,
        /// What it was granted.
        scopes: ScopeSet,
    },
    /// A member's login token.
    User {
        /// The user.
        user_id: UserId,
        /// Their role in the token's workspace.
        role: Role,
    },
}

/// A verified credential: the one workspace it acts in, that workspace's plan and its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// The workspace every query of the request is scoped to.
    pub workspace_id: WorkspaceId,
    /// The workspace's plan at the time of the request.
    pub plan: PlanTier,
    /// Key or user.
    pub owner: CredentialOwner,
}

/// An active member of an active workspace, authenticated by a login token or a session.
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
