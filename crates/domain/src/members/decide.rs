//! The rules of a membership's change, removal and admission over the facts the storage reads
//! inside its transaction (facts → decision → apply): the last active admin stays, a
//! reactivation gives access back only to who once accepted, the audit records carry what was
//! before, the same name again is not recorded, and an invitation is accepted once, while open.

use time::OffsetDateTime;

use super::model::{Admission, Availability, MemberChange, MemberStatus};
use super::ports::{AddMemberError, ChangeMemberError, InvitationFacts};
use crate::audit::{AuditAction, AuditEntry};
use crate::common::ports::PasswordHash;
use crate::users::{PersonName, Role, UserId};
use crate::workspace::WorkspaceId;

/// A membership as its transaction reads it, before a change or a removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberFacts {
    /// The member's role.
    pub role: Role,
    /// Invited, active or deactivated.
    pub status: MemberStatus,
    /// Whether the person ever accepted (the membership has a `joined_at`).
    pub joined: bool,
    /// Their name in this workspace.
    pub name: String,
    /// Their e-mail.
    pub email: String,
}

impl MemberFacts {
    /// Whether the member is an active admin, so that taking their rights away needs the count of
    /// the other active admins ([`decide_change`], [`decide_removal`]). The storage reads that
    /// count only then, with the admins' memberships locked, so two concurrent demotions serialise.
    pub fn is_active_admin(&self) -> bool {
        told_about_workspace(self.role, self.status)
    }
}

/// Whether a member with `role` and `status` is told about the workspace's keys and webhooks
/// (leaks, expiries, failing or deactivated destinations) by e-mail: its active admins; an
/// invited or deactivated admin is not.
pub fn told_about_workspace(role: Role, status: MemberStatus) -> bool {
    role == Role::Admin && status == MemberStatus::Active
}

/// What a change writes: each `Some` field is stored; `audit` is stored with it.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberWrite {
    /// The new role.
    pub role: Option<Role>,
    /// The new status (after an activation or deactivation).
    pub status: Option<MemberStatus>,
    /// The new availability.
    pub availability: Option<Availability>,
    /// The new name in this workspace (also when it is the same: only its record is dropped).
    pub name: Option<PersonName>,
    /// The records to store in the change's transaction.
    pub audit: Vec<AuditEntry>,
}

/// Whether taking an active admin's rights away leaves the workspace with none. `other_admins`
/// is the number of other active admins, read only for an active admin (`None` otherwise).
fn leaves_no_admin(facts: &MemberFacts, other_admins: Option<usize>) -> bool {
    facts.is_active_admin() && other_admins.unwrap_or(0) == 0
}

/// The write of `change` on the membership of `facts`, with the service's records `entries`
/// completed by what was before (`previous_role`, `previous_name`); a rename to the same name
/// is not recorded.
///
/// # Errors
/// [`ChangeMemberError::LastAdmin`] when the change takes the rights of the last active admin
/// away (a demotion or a deactivation).
pub fn decide_change(
    facts: &MemberFacts,
    other_admins: Option<usize>,
    change: &MemberChange,
    entries: &[AuditEntry],
) -> Result<MemberWrite, ChangeMemberError> {
    if change.removes_admin_rights() && leaves_no_admin(facts, other_admins) {
        return Err(ChangeMemberError::LastAdmin);
    }
    let same_name = change.name.as_ref().is_some_and(|n| n.as_str() == facts.name);
    let audit = entries
        .iter()
        .filter_map(|e| match e.action {
            AuditAction::MemberRoleChanged => Some(e.with_detail("previous_role", facts.role.as_str())),
            // The same name again changes nothing and is not recorded.
            AuditAction::MemberUpdated if same_name => None,
            AuditAction::MemberUpdated => Some(e.with_detail("previous_name", facts.name.clone())),
            _ => Some(e.clone()),
        })
        .collect();
    Ok(MemberWrite {
        role: change.role,
        status: change.active.map(|_| facts.status.after(change.active, facts.joined)),
        availability: change.availability,
        name: change.name.clone(),
        audit,
    })
}

/// Whom the caller of a change or removal may touch, as the access policy decided before the
/// transaction; checked again against the member's role as the transaction reads it (row locked),
/// so a member promoted meanwhile is not changed by a caller who manages agents only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberRights {
    /// Admins and agents (an admin member, the operator).
    AdminsToo,
    /// Agents only (an API key with `users:write`).
    AgentsOnly,
}

impl MemberRights {
    /// Whether `change` of the member of `facts` is within these rights.
    ///
    /// # Errors
    /// [`ChangeMemberError::AdminsOnly`].
    pub fn allow_change(self, facts: &MemberFacts, change: &MemberChange) -> Result<(), ChangeMemberError> {
        if self == MemberRights::AgentsOnly && change.needs_admin(facts.role) {
            return Err(ChangeMemberError::AdminsOnly);
        }
        Ok(())
    }

    /// Whether removing the member of `facts` is within these rights.
    ///
    /// # Errors
    /// [`ChangeMemberError::AdminsOnly`].
    pub fn allow_removal(self, facts: &MemberFacts) -> Result<(), ChangeMemberError> {
        if self == MemberRights::AgentsOnly && facts.role == Role::Admin {
            return Err(ChangeMemberError::AdminsOnly);
        }
        Ok(())
    }
}

/// The record of removing the membership of `facts` (`entry` with the member's `email`).
///
/// # Errors
/// [`ChangeMemberError::LastAdmin`] when the member is the last active admin.
pub fn decide_removal(
    facts: &MemberFacts,
    other_admins: Option<usize>,
    entry: &AuditEntry,
) -> Result<AuditEntry, ChangeMemberError> {
    if leaves_no_admin(facts, other_admins) {
        return Err(ChangeMemberError::LastAdmin);
    }
    Ok(entry.with_detail("email", facts.email.clone()))
}

/// How a person's membership is written when they are added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmissionWrite {
    /// `false`: create the membership ([`Admission::New`]); `true`: replace the invited one and
    /// void its older links ([`Admission::Reinvite`]).
    pub reinvite: bool,
    /// `invited` with an invitation, else `active` (the operator vouched).
    pub status: MemberStatus,
    /// When the person joined: now for an active membership, none for an invited one.
    pub joined_at: Option<OffsetDateTime>,
}

/// The account a person is added with, as the add found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddedAccount {
    /// Created by this add (with the operator's password, when one was given).
    New,
    /// It existed and has a password of its own (never changed by an add).
    WithPassword,
    /// It existed without a password (invited somewhere, never accepted).
    WithoutPassword,
}

impl AddedAccount {
    /// The account as found: `created` by this add, else with its `stored` hash.
    pub fn of(created: bool, stored: &crate::common::ports::PasswordHash) -> Self {
        if created {
            AddedAccount::New
        } else if stored.holds_a_password() {
            AddedAccount::WithPassword
        } else {
            AddedAccount::WithoutPassword
        }
    }
}

/// The write of adding a person whose membership so far is `existing`, at `now`: active at once
/// when the operator `vouched` with a password and the person can sign in (the account is new and
/// takes that password, or has one of its own); otherwise invited, with a link to choose one. An
/// account that exists without a password is never given the operator's (only a new account is),
/// so it is invited: active without any password, nobody could ever sign in to it.
///
/// # Errors
/// [`AddMemberError::AlreadyMember`] for an active or deactivated member.
pub fn decide_admission(
    existing: Option<MemberStatus>,
    vouched: bool,
    account: AddedAccount,
    now: OffsetDateTime,
) -> Result<AdmissionWrite, AddMemberError> {
    let reinvite = match Admission::of(existing) {
        Admission::AlreadyMember => return Err(AddMemberError::AlreadyMember),
        Admission::New => false,
        Admission::Reinvite => true,
    };
    let at_once = vouched && account != AddedAccount::WithoutPassword;
    let (status, joined_at) = if at_once { (MemberStatus::Active, Some(now)) } else { (MemberStatus::Invited, None) };
    Ok(AdmissionWrite { reinvite, status, joined_at })
}

/// An accepted invitation: who is now signed in where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcceptedInvitation {
    /// The workspace.
    pub workspace_id: WorkspaceId,
    /// The user.
    pub user_id: UserId,
}

/// What accepting an invitation writes, all in one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvitationAcceptance {
    /// Who joined where.
    pub accepted: AcceptedInvitation,
    /// When: the link is used and the membership active (joined) since then.
    pub at: OffsetDateTime,
    /// The account's first password, when it had none.
    pub password: Option<PasswordHash>,
}

/// Decides accepting the invitation `facts` (read with the account, the membership and the link
/// locked) at `now`, with the `password` chosen on its page, hashed. The link must still open the
/// invitation ([`InvitationFacts::is_open`]), and a new password goes exactly with an account
/// that has none: an account without one cannot join without choosing it, and the link never
/// changes a password an account has (one set by another submission meanwhile included). `None`:
/// refused, nothing changes.
pub fn decide_acceptance(
    facts: &InvitationFacts,
    now: OffsetDateTime,
    password: Option<PasswordHash>,
) -> Option<InvitationAcceptance> {
    if !facts.is_open(now) || password.is_some() == facts.password_hash.is_some() {
        return None;
    }
    Some(InvitationAcceptance {
        accepted: AcceptedInvitation { workspace_id: facts.workspace_id, user_id: facts.user_id },
        at: now,
        password,
    })
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
