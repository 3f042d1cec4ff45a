//! Unit tests of [`WorkspaceService`] on mocks.

use super::*;
use crate::audit::AuditEntry;
use crate::common::ports::{MockPasswordHasher, MockRandomSource, PasswordHash};
use crate::users::UserId;
use crate::workspace::MockWorkspaceRepository;

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

fn service(repo: MockWorkspaceRepository, hasher: MockPasswordHasher, random: MockRandomSource) -> WorkspaceService {
    WorkspaceService::new(Arc::new(repo), Arc::new(hasher), Arc::new(random))
}

fn workspace(id: WorkspaceId, plan: PlanTier) -> Workspace {
    Workspace {
        id,
        name: "Acme Support".into(),
        slug: "acme-support".into(),
        is_active: true,
        plan,
        created_at: time::OffsetDateTime::UNIX_EPOCH,
    }
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
        .returning(|_| Ok(CreatedWorkspace { workspace_id: WorkspaceId(1), user_id: UserId(2), admin_invited: false }));
    let created = service(repo, hasher(), MockRandomSource::new()).create(cmd()).await;
    assert!(matches!(
        created,
        Ok(CreatedWorkspace { workspace_id: WorkspaceId(1), user_id: UserId(2), admin_invited: false })
    ));
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
        .returning(|_| Ok(CreatedWorkspace { workspace_id: WorkspaceId(1), user_id: UserId(1), admin_invited: false }));
    let mut random = MockRandomSource::new();
    random.expect_fill().returning(|b| b.fill(0));
    assert!(service(repo, hasher(), random).create(cmd()).await.is_ok());
}

#[tokio::test]
async fn a_slug_taken_at_every_attempt_is_an_infrastructure_failure() {
    let mut repo = MockWorkspaceRepository::new();
    repo.expect_insert_with_admin()
        .times(SLUG_ATTEMPTS)
        .returning(|n| Err(InsertWorkspaceError::SlugTaken(n.slug.as_str().into())));
    let mut random = MockRandomSource::new();
    random.expect_fill().returning(|b| b.fill(1));
    let e = service(repo, hasher(), random).create(cmd()).await;
    assert!(matches!(e, Err(CreateWorkspaceError::Unknown(_))), "{e:?}");
}

#[tokio::test]
async fn every_bad_field_is_named_and_nothing_is_stored() {
    let bad = CreateWorkspace { name: " ".into(), admin_email: "nope".into(), admin_password: "short".into(), ..cmd() };
    let s = service(MockWorkspaceRepository::new(), MockPasswordHasher::new(), MockRandomSource::new());
    let Err(CreateWorkspaceError::Invalid(errors)) = s.create(bad).await else {
        panic!("expected a validation failure");
    };
    let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["name", "admin_email", "admin_password"]);
}

#[tokio::test]
async fn a_plan_change_is_stored_with_its_audit_record() {
    let mut repo = MockWorkspaceRepository::new();
    let recorded = |e: &AuditEntry| {
        e.action == AuditAction::WorkspacePlanChanged && e.details == serde_json::json!({ "plan": "growth" })
    };
    repo.expect_set_plan()
        .withf(move |id, plan, entry| *id == WorkspaceId(4) && *plan == PlanTier::Growth && recorded(entry))
        .times(1)
        .returning(|id, plan, _| Ok(workspace(id, plan)));
    let s = service(repo, MockPasswordHasher::new(), MockRandomSource::new());
    let ws = s.change_plan(&AuditContext::cli(), WorkspaceId(4), PlanTier::Growth).await.expect("changed");
    assert_eq!(ws.plan, PlanTier::Growth);
}

#[tokio::test]
async fn an_unknown_workspace_is_not_found() {
    let mut repo = MockWorkspaceRepository::new();
    repo.expect_set_plan().returning(|id, _, _| Err(SetPlanError::NotFound(id)));
    let s = service(repo, MockPasswordHasher::new(), MockRandomSource::new());
    let e = s.change_plan(&AuditContext::cli(), WorkspaceId(9), PlanTier::Free).await;
    assert!(matches!(e, Err(ChangePlanError::NotFound(WorkspaceId(9)))), "{e:?}");
}

#[test]
fn a_plan_change_is_recorded_with_the_plan_before_and_the_same_plan_is_no_change() {
    let audit = AuditContext::cli().entry(
        WorkspaceId(3),
        AuditAction::WorkspacePlanChanged,
        AuditTarget::workspace(WorkspaceId(3)),
        serde_json::json!({ "plan": "growth" }),
    );
    let record = plan_change("starter", PlanTier::Growth, &audit).expect("a change");
    assert_eq!(record.details, serde_json::json!({"plan": "growth", "previous_plan": "starter"}));
    assert_eq!(plan_change("growth", PlanTier::Growth, &audit), None);
}
