//! Signing in to the settings pages, the state a cookie stands for, picking the workspace, and
//! signing out. The password check and its throttle are the login API's ([`check_credentials`]).

use std::sync::Arc;

use async_trait::async_trait;
use time::{Duration, OffsetDateTime};

use super::model::{Session, SessionSecret, WorkspaceChoice};
use super::ports::{NewSession, SessionRepository};
use crate::access::{Caller, Surface};
use crate::audit::{ActorType, AuditAction, AuditActor, AuditContext, AuditTarget};
use crate::auth::{
    check_credentials, sign_in_entry, LoginError, LoginPorts, LoginRequest, LoginSettings, SessionLookup, SessionUser,
    SignInProof, SignInStored, StoredMember, WorkspaceMember,
};
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::ports::{Clock, RandomSource};
use crate::users::UserId;
use crate::workspace::WorkspaceId;

/// Ended sessions are kept this long before the sweep at sign-in deletes them.
const KEEP_ENDED: Duration = Duration::days(1);

/// A successful sign-in.
#[derive(Debug)]
pub struct SignedIn {
    /// The cookie value, to set once.
    pub secret: SessionSecret,
    /// When the session ends.
    pub expires_at: OffsetDateTime,
    /// The workspace it works in; `None` when the user must pick one of several.
    pub workspace_id: Option<WorkspaceId>,
}

/// What a session cookie stands for now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionState {
    /// No cookie, a malformed, unknown, expired or revoked one, or a user without workspaces.
    SignedOut,
    /// Signed in, but the workspace is still to be picked.
    ChoosingWorkspace {
        /// The session.
        session: Session,
        /// The workspaces to pick from.
        choices: Vec<WorkspaceChoice>,
    },
    /// Signed in to a workspace the user is still an active member of.
    InWorkspace {
        /// The session.
        session: Session,
        /// The member as the one caller (settings surface), with the current role and plan.
        caller: Caller,
        /// The workspace's name.
        workspace_name: String,
        /// How many workspaces the user may work in.
        workspace_count: usize,
    },
}

/// Why a workspace could not be picked.
#[derive(Debug, thiserror::Error)]
pub enum ChooseWorkspaceError {
    /// The session is not valid (any more).
    #[error("you are signed out")]
    SignedOut,
    /// The user is not an active member of it (or the session already works in another one).
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// The sessions use cases.
pub struct SessionService {
    /// Storage.
    pub repo: Arc<dyn SessionRepository>,
    /// Now.
    pub clock: Arc<dyn Clock>,
    /// The OS CSPRNG.
    pub random: Arc<dyn RandomSource>,
    /// How long a session lasts after sign-in.
    pub ttl: Duration,
}

impl std::fmt::Debug for SessionService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionService").field("ttl", &self.ttl).finish_non_exhaustive()
    }
}

impl SessionService {
    /// Checks e-mail and password exactly as the login API does (same throttle, same single
    /// answer for a wrong e-mail or password) and opens a session. A member of one workspace is
    /// signed in to it; a member of several names one (`workspace_id`) or picks one next.
    ///
    /// # Errors
    /// [`LoginError`]; [`LoginError::Invalid`] on `workspace_id` for a workspace the user cannot use.
    pub async fn sign_in(
        &self,
        ports: LoginPorts<'_>,
        settings: &LoginSettings,
        req: LoginRequest,
    ) -> Result<SignedIn, LoginError> {
        let wanted = req.workspace_id;
        let context = req.context.clone();
        let user = check_credentials(ports, settings, req).await?;
        let choices = self.choices(user.id).await?;
        let workspace_id = match (wanted, choices.as_slice()) {
            (_, []) => return Err(LoginError::NoWorkspace),
            (Some(ws), all) if all.iter().any(|c| c.id == ws) => Some(ws),
            (Some(_), _) => {
                return Err(
                    ValidationErrors::one("workspace_id", "you are not an active member of this workspace").into()
                )
            }
            (None, [only]) => Some(only.id),
            (None, _) => None,
        };
        let now = self.clock.now();
        self.repo.delete_ended(now - KEEP_ENDED).await?;
        let secret = SessionSecret::generate(self.random.as_ref());
        let expires_at = now + self.ttl;
        // docs/contract.md, "Audit log": a sign-in goes into the log of the workspace named, or of
        // every workspace of the account when none is. A member of several who picks one later
        // has signed in to all of them at this point (the session can enter any); the later
        // choice is not another sign-in (docs/audit.md).
        let records: Vec<_> = match workspace_id {
            Some(ws) => vec![sign_in_entry(&context, &user, ws, None)],
            None => choices.iter().map(|c| sign_in_entry(&context, &user, c.id, None)).collect(),
        };
        let new = NewSession {
            digest: secret.digest(),
            user_id: user.id,
            workspace_id,
            created_at: now,
            expires_at,
            proof: SignInProof::Password(user.password_hash.clone()),
        };
        match self.repo.insert(&new, &records).await? {
            SignInStored::Stored => {}
            // A reset changed the password after it was checked: the one given is wrong now.
            SignInStored::PasswordChanged => return Err(LoginError::InvalidCredentials),
        }
        Ok(SignedIn { secret, expires_at, workspace_id })
    }

    /// Opens a session in `ws` for a user whose identity was proven another way (an accepted
    /// invitation: the one-time link stood in for the password), recorded as `user.signed_in`
    /// `via` that way in the session's transaction.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn open(
        &self,
        user_id: UserId,
        ws: WorkspaceId,
        context: &AuditContext,
        via: &str,
    ) -> Result<SignedIn, RepoError> {
        let now = self.clock.now();
        let secret = SessionSecret::generate(self.random.as_ref());
        let expires_at = now + self.ttl;
        // The actor's label (the e-mail) is filled in by the storage.
        let actor = AuditActor { kind: ActorType::User, id: Some(user_id.0), label: None };
        let record = context.with_actor(actor).entry(
            ws,
            AuditAction::UserSignedIn,
            AuditTarget::user(Some(user_id.0)),
            serde_json::json!({ "via": via }),
        );
        let new = NewSession {
            digest: secret.digest(),
            user_id,
            workspace_id: Some(ws),
            created_at: now,
            expires_at,
            proof: SignInProof::Link,
        };
        // A link's proof always holds: the answer is the same either way.
        self.repo.insert(&new, &[record]).await?;
        Ok(SignedIn { secret, expires_at, workspace_id: Some(ws) })
    }

    /// The valid session behind a cookie value, if any.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn session(&self, cookie: &str) -> Result<Option<(SessionSecret, Session)>, RepoError> {
        let Some(secret) = SessionSecret::parse(cookie) else { return Ok(None) };
        let now = self.clock.now();
        Ok(self.repo.find(&secret.digest()).await?.filter(|s| s.is_valid(now)).map(|s| (secret, s)))
    }

    /// What a cookie value stands for now. A session whose workspace membership ended signs out.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn state(&self, cookie: &str) -> Result<SessionState, RepoError> {
        let Some((_, session)) = self.session(cookie).await? else { return Ok(SessionState::SignedOut) };
        let choices = self.choices(session.user_id).await?;
        match session.workspace_id {
            None if choices.is_empty() => Ok(SessionState::SignedOut),
            None => Ok(SessionState::ChoosingWorkspace { session, choices }),
            Some(ws) => match choices.iter().find(|c| c.id == ws) {
                None => Ok(SessionState::SignedOut),
                Some(c) => Ok(SessionState::InWorkspace {
                    caller: WorkspaceMember { workspace_id: ws, plan: c.plan, user_id: session.user_id, role: c.role }
                        .caller(Surface::Settings),
                    workspace_name: c.name.clone(),
                    workspace_count: choices.len(),
                    session,
                }),
            },
        }
    }

    /// Sets the workspace of a session opened without one.
    ///
    /// # Errors
    /// [`ChooseWorkspaceError`].
    pub async fn choose_workspace(&self, cookie: &str, ws: WorkspaceId) -> Result<(), ChooseWorkspaceError> {
        let (secret, session) = self.session(cookie).await?.ok_or(ChooseWorkspaceError::SignedOut)?;
        let not_member = || ValidationErrors::one("workspace_id", "you are not an active member of this workspace");
        if session.workspace_id == Some(ws) {
            return Ok(());
        }
        if session.workspace_id.is_some() {
            return Err(ValidationErrors::one("workspace_id", "sign in again to work in another workspace").into());
        }
        if !self.choices(session.user_id).await?.iter().any(|c| c.id == ws) {
            return Err(not_member().into());
        }
        if self.repo.set_workspace(&secret.digest(), ws).await? {
            Ok(())
        } else {
            Err(ChooseWorkspaceError::SignedOut)
        }
    }

    /// The workspaces the user's memberships count in ([`crate::auth::Standing::counts`]): the
    /// only ones a session is offered or works in.
    async fn choices(&self, user: UserId) -> Result<Vec<WorkspaceChoice>, RepoError> {
        let mut all = self.repo.workspaces_of(user).await?;
        all.retain(|c| c.standing.counts());
        Ok(all)
    }

    /// Ends the session on the server (not just in the browser). Unknown cookies are ignored.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn sign_out(&self, cookie: &str) -> Result<(), RepoError> {
        match SessionSecret::parse(cookie) {
            Some(secret) => self.repo.revoke(&secret.digest(), self.clock.now()).await,
            None => Ok(()),
        }
    }
}

#[async_trait]
impl SessionLookup for SessionService {
    async fn user_for_session(&self, cookie_value: &str) -> Result<Option<SessionUser>, RepoError> {
        Ok(self
            .session(cookie_value)
            .await?
            .map(|(_, s)| SessionUser { user_id: s.user_id, workspace_id: s.workspace_id }))
    }

    async fn member(&self, ws: WorkspaceId, user: UserId) -> Result<Option<WorkspaceMember>, RepoError> {
        Ok(self.repo.member(ws, user).await?.and_then(StoredMember::counting))
    }
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
