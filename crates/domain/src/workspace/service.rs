//! Provisioning: creating workspaces and changing their plan (the operator's CLI, the seeder and
//! the test helpers).

use std::sync::Arc;

use super::model::{PlanTier, Slug, WorkspaceName};
use super::model::{Workspace, WorkspaceId};
use super::ports::{CreatedWorkspace, InsertWorkspaceError, NewWorkspace, SetPlanError, WorkspaceRepository};
use crate::audit::{AuditAction, AuditContext, AuditEntry, AuditTarget};
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::ports::{PasswordHasher, RandomSource};
use crate::users::{Email, Password, PersonName};

/// The operator's request to create a workspace with its first admin.
#[derive(Debug, Clone)]
pub struct CreateWorkspace {
    /// Workspace display name.
    pub name: String,
    /// Plan tier.
    pub plan: PlanTier,
    /// Admin e-mail.
    pub admin_email: String,
    /// Admin password (plain, hashed here).
    pub admin_password: String,
    /// Admin display name; defaults to the e-mail's local part.
    pub admin_name: Option<String>,
}

/// Why a workspace could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateWorkspaceError {
    /// The input is invalid.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Infrastructure failure (a slug still taken after every attempt included).
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a workspace's plan could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum ChangePlanError {
    /// No workspace has this id.
    #[error("no workspace with id {0}")]
    NotFound(WorkspaceId),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

impl From<SetPlanError> for ChangePlanError {
    fn from(e: SetPlanError) -> Self {
        match e {
            SetPlanError::NotFound(id) => Self::NotFound(id),
            SetPlanError::Unknown(e) => Self::Unknown(e),
        }
    }
}

/// How many times a random suffix is tried when a slug is taken.
const SLUG_ATTEMPTS: usize = 5;

/// The workspace use cases: the storage, the hasher of the first admin's password and the
/// randomness of a taken slug's suffix.
#[derive(Clone)]
pub struct WorkspaceService {
    repo: Arc<dyn WorkspaceRepository>,
    hasher: Arc<dyn PasswordHasher>,
    random: Arc<dyn RandomSource>,
}

impl std::fmt::Debug for WorkspaceService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceService").finish_non_exhaustive()
    }
}

impl WorkspaceService {
    /// The service over its ports.
    pub fn new(
        repo: Arc<dyn WorkspaceRepository>,
        hasher: Arc<dyn PasswordHasher>,
        random: Arc<dyn RandomSource>,
    ) -> Self {
        Self { repo, hasher, random }
    }

    /// Creates a workspace, its admin user and membership; a taken slug gets a random suffix.
    ///
    /// # Errors
    /// [`CreateWorkspaceError::Invalid`] naming every bad field.
    pub async fn create(&self, cmd: CreateWorkspace) -> Result<CreatedWorkspace, CreateWorkspaceError> {
        let mut errors = ValidationErrors::default();
        let name = errors.check(WorkspaceName::new(&cmd.name));
        let email = errors.check(Email::new("admin_email", &cmd.admin_email));
        let password = errors.check(Password::new("admin_password", &cmd.admin_password));
        let admin_name = match (&cmd.admin_name, &email) {
            (Some(n), _) => errors.check(PersonName::new("admin_name", n)),
            (None, Some(e)) => PersonName::new("admin_name", e.local_part()).ok(),
            (None, None) => None,
        };
        errors.clone().into_result()?;
        let (Some(name), Some(email), Some(password), Some(admin_name)) = (name, email, password, admin_name) else {
            return Err(CreateWorkspaceError::Invalid(errors));
        };

        let admin_password_hash = self.hasher.hash(&password).await.map_err(RepoError)?;
        let base = Slug::from_name(&name);
        let mut new = NewWorkspace {
            name,
            slug: base.clone(),
            plan: cmd.plan,
            admin_email: email,
            admin_name,
            admin_password_hash,
        };
        for _ in 0..SLUG_ATTEMPTS {
            match self.repo.insert_with_admin(&new).await {
                Ok(created) => return Ok(created),
                Err(InsertWorkspaceError::SlugTaken(_)) => new.slug = base.with_suffix(&self.random_suffix()),
                Err(InsertWorkspaceError::Unknown(e)) => return Err(e.into()),
            }
        }
        Err(RepoError::new(anyhow::anyhow!("no free slug for `{}` after {SLUG_ATTEMPTS} attempts", base.as_str()))
            .into())
    }

    /// Changes a workspace's plan (the operator's `wms workspace set-plan`), recording
    /// `workspace.plan_changed` with the change.
    ///
    /// # Errors
    /// [`ChangePlanError`].
    pub async fn change_plan(
        &self,
        audit: &AuditContext,
        id: WorkspaceId,
        plan: PlanTier,
    ) -> Result<Workspace, ChangePlanError> {
        let entry = audit.entry(
            id,
            AuditAction::WorkspacePlanChanged,
            AuditTarget::workspace(id),
            serde_json::json!({ "plan": plan.as_str() }),
        );
        Ok(self.repo.set_plan(id, plan, &entry).await?)
    }

    /// The workspace with this id, if any.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn find(&self, id: WorkspaceId) -> Result<Option<Workspace>, RepoError> {
        self.repo.find(id).await
    }

    /// Six lowercase letters or digits.
    fn random_suffix(&self) -> String {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let mut buf = [0u8; 6];
        self.random.fill(&mut buf);
        buf.iter().map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char).collect()
    }
}

/// A plan change decided against the plan the workspace has, read with its row locked: the
/// record to write with the change (its details gaining `previous_plan`), or none when the plan
/// stays what it is, in which case nothing is changed or recorded (`set-plan` run twice records
/// one change).
pub fn plan_change(before: &str, after: PlanTier, audit: &AuditEntry) -> Option<AuditEntry> {
    (before != after.as_str()).then(|| audit.with_detail("previous_plan", before))
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
