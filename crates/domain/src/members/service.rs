//! Members of a workspace (`docs/contract.md`, "Members" and "Access"): list, add (with a one-time
//! invitation for people without a password), change and remove. The route's action has been
//! allowed by the policy already; the rules that depend on the data are here, and where they need
//! more rights they ask the same policy.

use std::net::IpAddr;
use std::sync::Arc;

use time::{Duration, OffsetDateTime};

use super::decide::{AcceptedInvitation, MemberRights};
use super::model::{invitation_mail, MemberChange, MemberProfile};
use super::ports::{AddMemberError, ChangeMemberError, MemberRepository, NewMember, PendingInvitation};
use crate::access::{authorize, Action, Caller, Denied};
use crate::audit::{AuditAction, AuditContext, AuditEntry, AuditTarget};
use crate::auth::{LoginThrottleStore, NewToken, PasswordAttempt, ThrottlePolicy, TokenDigest, TokenKind};
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::page::{Page, PageRequest};
use crate::common::ports::{Clock, PasswordHasher, RandomSource};
use crate::mail::SiteUrl;
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
    /// A password for a new account (the operator's CLI only): the operator vouches for the
    /// person, whose membership is active at once. Without one, the person is invited by e-mail.
    pub password: Option<String>,
}

/// A one-time link's secret: e-mailed to the address; only the operator's CLI prints it.
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
    /// The member (`invited`, or `active` when the operator vouched with a password).
    pub profile: MemberProfile,
    /// The link e-mailed to an invited person: for the operator's CLI, never for an answer of the
    /// API or a page (the link is the person's proof of the address).
    pub invitation: Option<Invitation>,
}

/// Why a member could not be added.
#[derive(Debug, thiserror::Error)]
pub enum AddMemberFailure {
    /// Invalid fields.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// The caller may not add (or invite again) someone with this role: only admin members
    /// touch the admin role.
    #[error("{0}")]
    Forbidden(&'static str),
    /// Already a member of this workspace.
    #[error("{0} is already a member of this workspace")]
    AlreadyMember(String),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a member could not be changed. A removal fails in the same ways ([`RemoveMemberError`]),
/// with its own enum so that a signature says which operation failed.
#[derive(Debug, thiserror::Error)]
pub enum UpdateMemberError {
    /// A change of one's own role or activity, or anything about another member without the right
    /// to manage members.
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

impl From<ChangeMemberError> for UpdateMemberError {
    fn from(e: ChangeMemberError) -> Self {
        match e {
            ChangeMemberError::NotFound(id) => Self::NotFound(id),
            ChangeMemberError::LastAdmin => Self::LastAdmin,
            ChangeMemberError::AdminsOnly => Self::Forbidden("only workspace admins can change an admin"),
            ChangeMemberError::Unknown(e) => Self::Unknown(e),
        }
    }
}

/// Why a member could not be removed.
#[derive(Debug, thiserror::Error)]
pub enum RemoveMemberError {
    /// Removing oneself, or anyone without the right to manage members.
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

impl From<ChangeMemberError> for RemoveMemberError {
    fn from(e: ChangeMemberError) -> Self {
        match e {
            ChangeMemberError::NotFound(id) => Self::NotFound(id),
            ChangeMemberError::LastAdmin => Self::LastAdmin,
            ChangeMemberError::AdminsOnly => Self::Forbidden("only workspace admins can change an admin"),
            ChangeMemberError::Unknown(e) => Self::Unknown(e),
        }
    }
}

/// Why an invitation could not be accepted.
#[derive(Debug, thiserror::Error)]
pub enum AcceptInvitationError {
    /// Unknown, used, voided by a newer one, for a removed membership, or expired: the page
    /// says so (410) without telling which.
    #[error("this invitation link is not valid: it was used already, has expired, or was mistyped")]
    Invalid,
    /// Another account is signed in in this browser, and the invitation's account has a password
    /// (403): the link is for someone else.
    #[error("another account is signed in; sign out to accept this invitation")]
    OtherAccount,
    /// The account has a password and it was not given correctly.
    #[error("wrong password")]
    WrongPassword,
    /// The chosen password is not acceptable.
    #[error(transparent)]
    Password(ValidationErrors),
    /// Too many wrong passwords for this account from this client network, counted with the
    /// sign-in form's (429): the page is no way around the sign-in throttle.
    #[error("too many failed attempts; try again in {retry_after_secs} seconds")]
    Throttled {
        /// Seconds until the window ends.
        retry_after_secs: u64,
    },
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// What an open invitation link shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvitationView {
    /// The invited account (to refuse another signed-in account).
    pub user_id: UserId,
    /// The workspace's name.
    pub workspace_name: String,
    /// The invited address.
    pub email: String,
    /// Whether the account has a password (then the page asks for it), else the page lets the
    /// person choose one.
    pub has_password: bool,
}

/// The members use cases.
#[derive(Clone)]
pub struct MembersService {
    repo: Arc<dyn MemberRepository>,
    hasher: Arc<dyn PasswordHasher>,
    random: Arc<dyn RandomSource>,
    clock: Arc<dyn Clock>,
    site: SiteUrl,
    throttle: Arc<dyn LoginThrottleStore>,
    throttle_policy: ThrottlePolicy,
}

impl std::fmt::Debug for MembersService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MembersService").finish_non_exhaustive()
    }
}

impl MembersService {
    /// The service over its ports. `throttle` and `throttle_policy` are the sign-in throttle's:
    /// the invitation page's password checks count against the same budget.
    pub fn new(
        repo: Arc<dyn MemberRepository>,
        hasher: Arc<dyn PasswordHasher>,
        random: Arc<dyn RandomSource>,
        clock: Arc<dyn Clock>,
        site: SiteUrl,
        throttle: Arc<dyn LoginThrottleStore>,
        throttle_policy: ThrottlePolicy,
    ) -> Self {
        Self { repo, hasher, random, clock, site, throttle, throttle_policy }
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

    /// Invites a person (a new account, or an existing one) by e-mail: the membership is
    /// `invited` until they accept through the link sent to the address, valid
    /// [`INVITATION_TTL`]. The answer is the same whether or not an account exists and whether it
    /// has a password. An `invited` person added again gets a new link and the old one stops
    /// working; an `active` or `deactivated` member is a conflict. Only admin members (and the
    /// operator) add an admin. The operator's CLI may give a password for a new account
    /// ([`Action::MemberPasswordsSet`]): then the membership is active at once and nothing is
    /// e-mailed, as for an account with a password of its own; an account without one is invited.
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
        // A password vouches for the person: the policy leaves it to the operator.
        let vouched = password.is_some();
        if vouched {
            authorize(caller, Action::MemberPasswordsSet)
                .map_err(|_| AddMemberFailure::Forbidden("only an operator can set a password for someone"))?;
        }
        let existing = self.repo.find_by_email(caller.workspace_id, &email).await?;
        if role == Role::Admin || existing.as_ref().is_some_and(|m| m.role == Role::Admin) {
            admins(caller).map_err(AddMemberFailure::Forbidden)?;
        }
        let password_hash = match &password {
            Some(p) => Some(self.hasher.hash(p).await.map_err(RepoError)?),
            None => None,
        };
        let now = self.clock.now();
        let token = NewToken::generate(TokenKind::User, self.random.as_ref());
        let expires_at = now + INVITATION_TTL;
        // Prepared either way: an account that exists without a password is invited even when
        // the operator vouches (only a new account takes the operator's password).
        let invitation = {
            let workspace_name = self.repo.workspace_name(caller.workspace_id).await?.unwrap_or_default();
            let link = self.site.link(&format!("/invitations/{}", token.secret));
            let mail = invitation_mail(email.clone(), &workspace_name, role, link);
            PendingInvitation { digest: token.digest(), expires_at, mail }
        };
        let new = NewMember {
            workspace_id: caller.workspace_id,
            email: email.clone(),
            name,
            role,
            password_hash,
            invitation,
        };
        // Never whether the account existed or had a password: the audit log is read by admins.
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
        let invitation = added.invited.then(|| Invitation { token: token.secret.clone(), expires_at });
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
            // Looked up first: another workspace's member is 404 to everyone, never 403.
            let current = self.repo.find(caller.workspace_id, user).await?.ok_or(UpdateMemberError::NotFound(user))?;
            manage(caller).map_err(UpdateMemberError::Forbidden)?;
            if change.needs_admin(current.role) {
                admins(caller).map_err(UpdateMemberError::Forbidden)?;
            }
        }
        let entries = change_entries(caller, audit, user, change);
        // Checked again in the transaction against the role it reads (a promotion meanwhile).
        let rights = if own || admins(caller).is_ok() { MemberRights::AdminsToo } else { MemberRights::AgentsOnly };
        Ok(self.repo.update(caller.workspace_id, user, change, &entries, rights).await?)
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
        let current = self.repo.find(caller.workspace_id, user).await?.ok_or(RemoveMemberError::NotFound(user))?;
        if current.role == Role::Admin {
            admins(caller).map_err(RemoveMemberError::Forbidden)?;
        }
        let entry = audit.entry(
            caller.workspace_id,
            AuditAction::MemberRemoved,
            AuditTarget::user(Some(user.0)),
            serde_json::json!({}),
        );
        let rights = if admins(caller).is_ok() { MemberRights::AdminsToo } else { MemberRights::AgentsOnly };
        Ok(self.repo.remove(caller.workspace_id, user, &entry, rights).await?)
    }

    /// What an invitation link leads to; `None` when it does not work (used, voided, for a
    /// removed membership, expired or made up): the page answers 410.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn invitation(&self, token: &str) -> Result<Option<InvitationView>, RepoError> {
        let Some(digest) = invitation_digest(token) else { return Ok(None) };
        let now = self.clock.now();
        Ok(self.repo.invitation(&digest).await?.filter(|f| f.is_open(now)).map(|f| InvitationView {
            user_id: f.user_id,
            workspace_name: f.workspace_name,
            email: f.email,
            has_password: f.password_hash.is_some(),
        }))
    }

    /// Accepts an invitation. An account without a password chooses one here (the link is the
    /// proof of the address); an account with a password is signed in as that account, in this
    /// browser (`signed_in`) or by its `password`: the link alone never signs anyone in and never
    /// changes a password; a different signed-in account is refused there. A password check goes
    /// through the sign-in throttle for the account's address from `client`, like the sign-in
    /// form's.
    ///
    /// # Errors
    /// [`AcceptInvitationError`].
    pub async fn accept_invitation(
        &self,
        token: &str,
        password: &str,
        signed_in: Option<UserId>,
        client: Option<IpAddr>,
    ) -> Result<AcceptedInvitation, AcceptInvitationError> {
        let digest = invitation_digest(token).ok_or(AcceptInvitationError::Invalid)?;
        let now = self.clock.now();
        let facts =
            self.repo.invitation(&digest).await?.filter(|f| f.is_open(now)).ok_or(AcceptInvitationError::Invalid)?;
        // Another account signed in here cannot stand for an account that has a password. An
        // account without one is proven by the link alone, whoever uses this browser: it is
        // accepted as for a visitor signed out, and the browser is signed in as it.
        if signed_in.is_some_and(|u| u != facts.user_id) && facts.password_hash.is_some() {
            return Err(AcceptInvitationError::OtherAccount);
        }
        let new_password = match &facts.password_hash {
            None => {
                let password = Password::new("password", password)
                    .map_err(|e| AcceptInvitationError::Password(ValidationErrors(vec![e])))?;
                Some(self.hasher.hash(&password).await.map_err(RepoError)?)
            }
            Some(_) if signed_in == Some(facts.user_id) => None,
            Some(hash) => {
                // Every stored address was valid when it was stored: one that no longer parses is a
                // damaged row, not the visitor's mistake.
                let email = Email::new("email", &facts.email).map_err(|e| {
                    RepoError(anyhow::anyhow!("stored address of user {}: {}", facts.user_id.0, e.message))
                })?;
                let attempt = PasswordAttempt::new(&email, client);
                if let Some(retry_after_secs) =
                    attempt.reserve(self.throttle.as_ref(), self.clock.now(), self.throttle_policy).await?
                {
                    return Err(AcceptInvitationError::Throttled { retry_after_secs });
                }
                let ok = match Password::new("password", password) {
                    Ok(p) => self.hasher.verify(&p, hash).await,
                    Err(_) => false,
                };
                if !ok {
                    return Err(AcceptInvitationError::WrongPassword);
                }
                attempt.succeeded(self.throttle.as_ref()).await?;
                None
            }
        };
        self.repo
            .accept_invitation(&digest, self.clock.now(), new_password)
            .await?
            .ok_or(AcceptInvitationError::Invalid)
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

/// `Err` with the reason when the caller may not touch the admin role (add, promote, demote,
/// deactivate, reactivate or remove an admin): admin members and the operator only, never a key.
fn admins(caller: &Caller) -> Result<(), &'static str> {
    authorize(caller, Action::AdminsManage).map_err(|d| match d {
        Denied::Forbidden(why) => why,
        Denied::InsufficientScope(_) | Denied::PlanRequired { .. } => "only workspace admins can do this",
    })
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
