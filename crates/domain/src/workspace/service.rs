//! Provisioning: creating workspaces and changing their plan.

use super::model::{PlanTier, Slug, WorkspaceName};
use super::model::{Workspace, WorkspaceId};
use super::ports::{CreatedWorkspace, InsertWorkspaceError, NewWorkspace, SetPlanError, WorkspaceRepository};
use crate::audit::{AuditAction, AuditContext, AuditTarget};
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
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Changes a workspace's plan (the operator's `wms workspace set-plan`), recording
/// `workspace.plan_changed` with the change.
///
/// # Errors
/// [`SetPlanError`].
pub async fn set_plan(
    repo: &dyn WorkspaceRepository,
    audit: &AuditContext,
    id: WorkspaceId,
    plan: PlanTier,
) -> Result<Workspace, SetPlanError> {
    let entry = audit.entry(
        id,
        AuditAction::WorkspacePlanChanged,
        AuditTarget::workspace(id),
        serde_json::json!({ "plan": plan.as_str() }),
    );
    repo.set_plan(id, plan, &entry).await
}

/// How many times a random suffix is tried when a slug is taken.
const SLUG_ATTEMPTS: usize = 5;

/// Creates a workspace, its admin user and membership; a taken slug gets a random suffix.
///
/// # Errors
/// [`CreateWorkspaceError::Invalid`] naming every bad field.
pub async fn create_workspace(
    repo: &dyn WorkspaceRepository,
    hasher: &dyn PasswordHasher,
    random: &dyn RandomSource,
    cmd: CreateWorkspace,
) -> Result<CreatedWorkspace, CreateWorkspaceError> {
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

    let admin_password_hash = hasher.hash(&password).await.map_err(RepoError)?;
    let base = Slug::from_name(&name);
    let mut new =
        NewWorkspace { name, slug: base.clone(), plan: cmd.plan, admin_email: email, admin_name, admin_password_hash };
    for _ in 0..SLUG_ATTEMPTS {
        match repo.insert_with_admin(&new).await {
            Ok(created) => return Ok(created),
            Err(InsertWorkspaceError::SlugTaken(_)) => new.slug = base.with_suffix(&random_suffix(random)),
            Err(InsertWorkspaceError::Unknown(e)) => return Err(e.into()),
        }
    }
    Err(RepoError::new(anyhow::anyhow!("no free slug for `{}` after {SLUG_ATTEMPTS} attempts", base.as_str())).into())
}

/// Six lowercase letters or digits.
fn random_suffix(random: &dyn RandomSource) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut buf = [0u8; 6];
    random.fill(&mut buf);
    buf.iter().map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::ports::{MockPasswordHasher, MockRandomSource, PasswordHash};
    use crate::users::UserId;
    use crate::workspace::{MockWorkspaceRepository, WorkspaceId};

    fn cmd() -> CreateWorkspace {
        CreateWorkspace {
            name: "Acme Support".into(),
            plan: PlanTier::Advanced,
            admin_email: "Admin@Acme.test".into(),
            admin_password: "correct horse battery".into(),
            admin_name: None,
        }
    }

    fn hasher() -> MockPasswordHasher {
        let mut h = MockPasswordHasher::new();
        h.expect_hash().returning(|_| Ok(PasswordHash("$argon2id$fake".into())));
        h
    }

    #[tokio::test]
    async fn creates_with_derived_slug_and_lowercased_email() {
        let mut repo = MockWorkspaceRepository::new();
        repo.expect_insert_with_admin()
            .withf(|n| {
                n.slug.as_str() == "acme-support"
                    && n.admin_email.as_str() == "admin@acme.test"
                    && n.admin_name.as_str() == "admin"
            })
            .returning(|_| Ok(CreatedWorkspace { workspace_id: WorkspaceId(1), user_id: UserId(2) }));
        let created = create_workspace(&repo, &hasher(), &MockRandomSource::new(), cmd()).await;
        assert!(matches!(created, Ok(CreatedWorkspace { workspace_id: WorkspaceId(1), user_id: UserId(2) })));
    }

    #[tokio::test]
    async fn taken_slug_gets_a_random_suffix() {
        let mut repo = MockWorkspaceRepository::new();
        let mut seq = mockall::Sequence::new();
        repo.expect_insert_with_admin()
            .times(1)
            .in_sequence(&mut seq)
            .returning(|n| Err(InsertWorkspaceError::SlugTaken(n.slug.as_str().into())));
        repo.expect_insert_with_admin()
            .times(1)
            .in_sequence(&mut seq)
            .withf(|n| n.slug.as_str() == "acme-support-aaaaaa")
            .returning(|_| Ok(CreatedWorkspace { workspace_id: WorkspaceId(1), user_id: UserId(1) }));
        let mut random = MockRandomSource::new();
        random.expect_fill().returning(|b| b.fill(0));
        assert!(create_workspace(&repo, &hasher(), &random, cmd()).await.is_ok());
    }

    #[tokio::test]
    async fn every_bad_field_is_named_and_nothing_is_stored() {
        let repo = MockWorkspaceRepository::new();
        let bad =
            CreateWorkspace { name: " ".into(), admin_email: "nope".into(), admin_password: "short".into(), ..cmd() };
        let Err(CreateWorkspaceError::Invalid(errors)) =
            create_workspace(&repo, &MockPasswordHasher::new(), &MockRandomSource::new(), bad).await
        else {
            panic!("expected a validation failure");
        };
        let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["name", "admin_email", "admin_password"]);
    }
}
