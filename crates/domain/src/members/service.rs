//! Members of a workspace (`decisions.md`, "Members" and "Access"): list, add (with a one-time
//! invitation for people without a password), change and remove. The route's action has been
//! allowed by the policy already; the rules that depend on the data are here, and where they need
//! more rights they ask the same policy.

use std::sync::Arc;

use time::{Duration, OffsetDateTime};

use super::model::{MemberChange, MemberProfile};
use super::ports::{AddMemberError, ChangeMemberError, MemberRepository, NewMember};
use crate::access::{authorize, Action, Caller, Denied};
use crate::audit::{AuditAction, AuditContext, AuditEntry, AuditTarget};
use crate::auth::{NewToken, TokenDigest, TokenKind};
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::page::{Page, PageRequest};
use crate::common::ports::{Clock, PasswordHasher, RandomSource};
use crate::users::{Email, Password, PersonName, Role, UserId};

/// How long an invitation link works.
pub const INVITATION_TTL: Duration = Duration::days(7);

/// A request to add someone, as received.
#[derive(Debug, Clone, Default)]
pub struct AddMember {
    /// Their e-mail.
    pub email: String,
    /// Their name in this workspace; defaults to the part of the e-mail before `@`.
    pub name: Option<String>,
    /// `admin` or `agent`.
    pub role: String,
    /// A password to set now (the CLI); without one, a person new to wms gets an invitation.
    pub password: Option<String>,
}

/// A one-time link's secret, shown once.
#[derive(Debug)]
pub struct Invitation {
    /// The token for the link (`/invitations/{token}`); only its digest is stored.
    pub token: String,
    /// When it stops working.
    pub expires_at: OffsetDateTime,
}

/// The result of adding a member.
#[derive(Debug)]
pub struct AddedMember {
    /// The member.
    pub profile: MemberProfile,
    /// For a person with no password yet.
    pub invitation: Option<Invitation>,
}

/// Why a member could not be added.
#[derive(Debug, thiserror::Error)]
pub enum AddMemberFailure {
    /// Invalid fields.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Already a member of this workspace.
    #[error("{0} is already a member of this workspace")]
    AlreadyMember(String),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Declares the error enum of a change or a removal of a member: the two fail in the same ways
/// (the policy or a rule of the data, an unknown member, the last active admin), each with its
/// own enum so that a signature says which operation failed.
macro_rules! member_change_error {
    ($(#[$doc:meta])* $name:ident, $forbidden:literal) => {
        $(#[$doc])*
        #[derive(Debug, thiserror::Error)]
        pub enum $name {
            #[doc = $forbidden]
            #[error("{0}")]
            Forbidden(&'static str),
            /// Not a member of this workspace.
            #[error("user {0} not found")]
            NotFound(UserId),
            /// The workspace would be left without an active admin.
            #[error("the workspace must keep at least one active admin")]
            LastAdmin,
            /// Infrastructure failure.
            #[error(transparent)]
            Unknown(#[from] RepoError),
        }

        impl From<ChangeMemberError> for $name {
            fn from(e: ChangeMemberError) -> Self {
                match e {
                    ChangeMemberError::NotFound(id) => Self::NotFound(id),
                    ChangeMemberError::LastAdmin => Self::LastAdmin,
                    ChangeMemberError::Unknown(e) => Self::Unknown(e),
                }
            }
        }
    };
}

member_change_error!(
    /// Why a member could not be changed.
    UpdateMemberError,
    "A change of one's own role or activity, or anything about another member without the right \
     to manage members."
);

member_change_error!(
    /// Why a member could not be removed.
    RemoveMemberError,
    "Removing oneself, or anyone without the right to manage members."
);

/// Why an invitation could not be accepted.
#[derive(Debug, thiserror::Error)]
pub enum AcceptInvitationError {
    /// Unknown, used or expired: the page says so without telling which.
    #[error("this invitation link is not valid: it was used already, has expired, or was mistyped")]
    Invalid,
    /// The chosen password is not acceptable.
    #[error(transparent)]
    Password(ValidationErrors),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// An accepted invitation: who is now signed in where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcceptedInvitation {
    /// The workspace.
    pub workspace_id: crate::workspace::WorkspaceId,
    /// The user.
    pub user_id: UserId,
}

/// The members use cases.
#[derive(Clone)]
pub struct MembersService {
    repo: Arc<dyn MemberRepository>,
    hasher: Arc<dyn PasswordHasher>,
    random: Arc<dyn RandomSource>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for MembersService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MembersService").finish_non_exhaustive()
    }
}

impl MembersService {
    /// The service over its ports.
    pub fn new(
        repo: Arc<dyn MemberRepository>,
        hasher: Arc<dyn PasswordHasher>,
        random: Arc<dyn RandomSource>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self { repo, hasher, random, clock }
    }

    /// One page of the caller's workspace's members, oldest membership first.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn list(&self, caller: &Caller, page: PageRequest) -> Result<Page<MemberProfile>, RepoError> {
        self.repo.list(caller.workspace_id, page).await
    }

    /// One member; `None` for someone outside the workspace.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn find(&self, caller: &Caller, user: UserId) -> Result<Option<MemberProfile>, RepoError> {
        self.repo.find(caller.workspace_id, user).await
    }

    /// Adds a person (a new account, or an existing one joining this workspace). Someone with no
    /// password gets a one-time invitation, valid [`INVITATION_TTL`].
    ///
    /// # Errors
    /// [`AddMemberFailure`].
    pub async fn add(
        &self,
        caller: &Caller,
        audit: &AuditContext,
        cmd: AddMember,
    ) -> Result<AddedMember, AddMemberFailure> {
        let mut errors = ValidationErrors::default();
        let email = errors.check(Email::new("email", &cmd.email));
        let role = errors.check(cmd.role.parse::<Role>());
        let default_name = cmd.email.trim().split('@').next().unwrap_or_default().to_owned();
        let name = errors.check(PersonName::new("name", cmd.name.as_deref().unwrap_or(&default_name)));
        let password = match cmd.password.as_deref() {
            Some(raw) => errors.check(Password::new("password", raw)).map(Some),
            None => Some(None),
        };
        errors.clone().into_result()?;
        let (Some(email), Some(role), Some(name), Some(password)) = (email, role, name, password) else {
            return Err(AddMemberFailure::Invalid(errors));
        };
        let password_hash = match &password {
            Some(p) => Some(self.hasher.hash(p).await.map_err(RepoError)?),
            None => None,
        };
        let now = self.clock.now();
        let invite = NewToken::generate(TokenKind::User, self.random.as_ref());
        let new = NewMember {
            workspace_id: caller.workspace_id,
            email: email.clone(),
            name,
            role,
            password_hash,
            invitation_digest: invite.digest(),
            invitation_expires_at: now + INVITATION_TTL,
        };
        let entry = audit.entry(
            caller.workspace_id,
            AuditAction::MemberAdded,
            AuditTarget::user(None),
            serde_json::json!({ "email": email.as_str(), "role": role.as_str() }),
        );
        let added = self.repo.add(&new, &entry).await.map_err(|e| match e {
            AddMemberError::AlreadyMember => AddMemberFailure::AlreadyMember(email.as_str().to_owned()),
            AddMemberError::Unknown(e) => AddMemberFailure::Unknown(e),
        })?;
        let invitation =
            added.invited.then(|| Invitation { token: invite.secret.clone(), expires_at: new.invitation_expires_at });
        Ok(AddedMember { profile: added.profile, invitation })
    }

    /// Changes a member. Everyone may rename themselves; nobody changes their own role or
    /// deactivates themselves; anything about another member needs [`Action::MembersManage`].
    ///
    /// # Errors
    /// [`UpdateMemberError`].
    pub async fn update(
        &self,
        caller: &Caller,
        audit: &AuditContext,
        user: UserId,
        change: &MemberChange,
    ) -> Result<MemberProfile, UpdateMemberError> {
        let own = caller.member().is_some_and(|(me, _)| me == user);
        if own && (change.role.is_some() || change.active.is_some()) {
            return Err(UpdateMemberError::Forbidden(
                "nobody can change their own role or deactivate themselves; ask another admin",
            ));
        }
        if !own {
            manage(caller).map_err(UpdateMemberError::Forbidden)?;
        }
        let entries = change_entries(caller, audit, user, change);
        Ok(self.repo.update(caller.workspace_id, user, change, &entries).await?)
    }

    /// Removes a member from the workspace (their account and other workspaces stay). Nobody
    /// removes themselves this way, and the last active admin stays.
    ///
    /// # Errors
    /// [`RemoveMemberError`].
    pub async fn remove(&self, caller: &Caller, audit: &AuditContext, user: UserId) -> Result<(), RemoveMemberError> {
        manage(caller).map_err(RemoveMemberError::Forbidden)?;
        if caller.member().is_some_and(|(me, _)| me == user) {
            return Err(RemoveMemberError::Forbidden("nobody can remove themselves; ask another admin"));
        }
        let entry = audit.entry(
            caller.workspace_id,
            AuditAction::MemberRemoved,
            AuditTarget::user(Some(user.0)),
            serde_json::json!({}),
        );
        Ok(self.repo.remove(caller.workspace_id, user, &entry).await?)
    }

    /// Sets the password of an invited person and uses up the link.
    ///
    /// # Errors
    /// [`AcceptInvitationError`].
    pub async fn accept_invitation(
        &self,
        token: &str,
        password: &str,
    ) -> Result<AcceptedInvitation, AcceptInvitationError> {
        let digest = invitation_digest(token).ok_or(AcceptInvitationError::Invalid)?;
        let password = Password::new("password", password)
            .map_err(|e| AcceptInvitationError::Password(ValidationErrors(vec![e])))?;
        // Checked before hashing, so a made-up link costs no password hash.
        if !self.repo.invitation_open(&digest, self.clock.now()).await? {
            return Err(AcceptInvitationError::Invalid);
        }
        let hash = self.hasher.hash(&password).await.map_err(RepoError)?;
        self.repo.accept_invitation(&digest, self.clock.now(), &hash).await?.ok_or(AcceptInvitationError::Invalid)
    }

    /// Whether an invitation link can still be used (for the page that asks for a password).
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn invitation_open(&self, token: &str) -> Result<bool, RepoError> {
        match invitation_digest(token) {
            Some(d) => self.repo.invitation_open(&d, self.clock.now()).await,
            None => Ok(false),
        }
    }
}

/// The digest of an invitation token, if it has the shape of one (checked offline, so garbage
/// costs no query).
fn invitation_digest(token: &str) -> Option<TokenDigest> {
    crate::auth::parse(token).ok().filter(|t| t.kind == TokenKind::User).map(|t| t.digest)
}

/// The records of a change: a new role, a deactivation or reactivation, a new name
/// (`member.updated`; the storage adds the name before, and drops the record when it is the same).
fn change_entries(caller: &Caller, audit: &AuditContext, user: UserId, change: &MemberChange) -> Vec<AuditEntry> {
    let mut entries = Vec::new();
    let target = AuditTarget::user(Some(user.0));
    if let Some(name) = &change.name {
        entries.push(audit.entry(
            caller.workspace_id,
            AuditAction::MemberUpdated,
            target,
            serde_json::json!({ "fields": ["name"], "name": name.as_str() }),
        ));
    }
    if let Some(role) = change.role {
        entries.push(audit.entry(
            caller.workspace_id,
            AuditAction::MemberRoleChanged,
            target,
            serde_json::json!({ "role": role.as_str() }),
        ));
    }
    if let Some(active) = change.active {
        let action = if active { AuditAction::MemberReactivated } else { AuditAction::MemberDeactivated };
        entries.push(audit.entry(caller.workspace_id, action, target, serde_json::json!({})));
    }
    if let Some(availability) = change.availability {
        entries.push(audit.entry(
            caller.workspace_id,
            AuditAction::MemberUpdated,
            target,
            serde_json::json!({ "fields": ["availability"], "availability": availability.as_str() }),
        ));
    }
    entries
}

/// `Err` with the reason when the caller may not manage other members.
fn manage(caller: &Caller) -> Result<(), &'static str> {
    authorize(caller, Action::MembersManage).map_err(|d| match d {
        Denied::Forbidden(why) => why,
        Denied::InsufficientScope(_) | Denied::PlanRequired { .. } => "only workspace admins can do this",
    })
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
