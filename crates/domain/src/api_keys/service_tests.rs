//! Unit tests of [`ApiKeysService`] on mocks.

use time::macros::datetime;
use time::OffsetDateTime;

use super::*;
use crate::api_keys::{ApiKeyState, MockApiKeyRepository, RolledKeys, StoreRollError};
use crate::audit::AuditAction;
use crate::auth::parse;
use crate::common::ports::{MockClock, MockRandomSource};
use crate::users::Role;
use crate::users::UserId;
use crate::workspace::WorkspaceId;

const NOW: OffsetDateTime = datetime!(2026-11-20 12:00 UTC);

fn member(plan: PlanTier, role: Role) -> Caller {
    crate::auth::WorkspaceMember { workspace_id: WorkspaceId(7), plan, user_id: UserId(3), role }
        .caller(crate::access::Surface::Settings)
}

fn admin(plan: PlanTier) -> Caller {
    member(plan, Role::Admin)
}

fn agent() -> Caller {
    member(PlanTier::Advanced, Role::Agent)
}

fn clock() -> MockClock {
    let mut c = MockClock::new();
    c.expect_now().return_const(NOW);
    c
}

fn random() -> MockRandomSource {
    let mut r = MockRandomSource::new();
    r.expect_fill().returning(|b| b.fill(0x5a));
    r
}

fn service(repo: MockApiKeyRepository) -> ApiKeysService {
    ApiKeysService::new(Arc::new(repo), Arc::new(clock()), Arc::new(random()))
}

fn stored(new: &NewApiKey) -> ApiKey {
    ApiKey {
        id: ApiKeyId(1),
        workspace_id: new.workspace_id,
        name: new.name.as_str().to_owned(),
        masked_key: new.masked_key.clone(),
        created_by: Some(new.created_by),
        created_at: NOW,
        expires_at: new.expires_at,
        last_used_at: None,
        last_used_ip: None,
        revoked_at: None,
        rolled_to: None,
        scopes: new.scopes,
    }
}

fn cmd(name: &str, expires_at: Option<&str>) -> CreateApiKey {
    CreateApiKey { name: name.into(), expires_at: expires_at.map(Into::into), scopes: None }
}

#[tokio::test]
async fn create_stores_only_the_digest_and_mask_and_returns_the_key_once() {
    let mut repo = MockApiKeyRepository::new();
    repo.expect_insert()
        .withf(|n, e| {
            e.action == AuditAction::ApiKeyCreated
                && !e.details.to_string().contains("wmsk_5")
                && n.name.as_str() == "CI deploy"
                && n.masked_key.starts_with("wmsk_…")
                && n.expires_at == Some(datetime!(2026-12-01 0:00 UTC))
                && n.workspace_id == WorkspaceId(7)
                && n.created_by == UserId(3)
        })
        .times(1)
        .returning(|n, _| Ok(stored(n)));
    let created = service(repo)
        .create(&admin(PlanTier::Advanced), &AuditContext::cli(), cmd(" CI deploy ", Some("2026-12-01T00:00:00Z")))
        .await
        .expect("created");
    let presented = parse(&created.secret.secret).expect("well-formed key");
    assert_eq!(presented.kind, TokenKind::ApiKey);
    assert!(created.secret.secret.ends_with(&created.key.masked_key["wmsk_…".len()..]));
    assert_eq!(created.key.state(NOW), ApiKeyState::Active);
}

#[tokio::test]
async fn create_below_advanced_is_plan_required() {
    for plan in [PlanTier::Free, PlanTier::Starter, PlanTier::Growth] {
        let result =
            service(MockApiKeyRepository::new()).create(&admin(plan), &AuditContext::cli(), cmd("ci", None)).await;
        assert!(
            matches!(result, Err(CreateApiKeyError::PlanRequired { required: PlanTier::Advanced, current }) if current == plan)
        );
    }
}

#[tokio::test]
async fn agents_cannot_manage_keys() {
    let repo = service(MockApiKeyRepository::new());
    assert!(matches!(
        repo.create(&agent(), &AuditContext::cli(), cmd("ci", None)).await,
        Err(CreateApiKeyError::Forbidden)
    ));
    assert!(matches!(
        repo.list(&agent(), PageRequest { limit: 25, after: None, filters: None }).await,
        Err(ListApiKeysError::Forbidden)
    ));
    assert!(matches!(
        repo.revoke(&agent(), &AuditContext::cli(), ApiKeyId(1)).await,
        Err(RevokeApiKeyError::Forbidden)
    ));
    assert!(matches!(
        repo.delete(&agent(), &AuditContext::cli(), ApiKeyId(1)).await,
        Err(DeleteApiKeyError::Forbidden)
    ));
}

#[tokio::test]
async fn every_bad_field_is_named_and_nothing_is_stored() {
    let result = service(MockApiKeyRepository::new())
        .create(&admin(PlanTier::Advanced), &AuditContext::cli(), cmd("  ", Some("2026-11-20T11:59:59Z")))
        .await;
    let Err(CreateApiKeyError::Invalid(errors)) = result else { panic!("expected a validation failure") };
    let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["name", "expires_at"]);
}

#[tokio::test]
async fn revoke_stamps_the_clock_time_and_reports_unknown_keys() {
    let mut repo = MockApiKeyRepository::new();
    repo.expect_revoke().withf(|ws, id, at, _| *ws == WorkspaceId(7) && *id == ApiKeyId(1) && *at == NOW).returning(
        |_, _, at, _| {
            let new = NewApiKey {
                workspace_id: WorkspaceId(7),
                name: ApiKeyName::new("ci").expect("name"),
                digest: crate::auth::digest("x"),
                masked_key: "wmsk_…abcd".into(),
                expires_at: None,
                created_by: UserId(3),
                scopes: ScopeSet::full(),
            };
            Ok(Some(ApiKey { revoked_at: Some(at), ..stored(&new) }))
        },
    );
    repo.expect_revoke().withf(|_, id, _, _| *id == ApiKeyId(2)).returning(|_, _, _, _| Ok(None));
    let repo = service(repo);
    let revoked = repo.revoke(&admin(PlanTier::Growth), &AuditContext::cli(), ApiKeyId(1)).await.expect("revoked");
    assert_eq!(revoked.state(NOW), ApiKeyState::Revoked);
    assert!(matches!(
        repo.revoke(&admin(PlanTier::Advanced), &AuditContext::cli(), ApiKeyId(2)).await,
        Err(RevokeApiKeyError::NotFound(ApiKeyId(2)))
    ));
}

#[tokio::test]
async fn delete_reports_unknown_keys() {
    let mut repo = MockApiKeyRepository::new();
    repo.expect_delete()
        .withf(|_, id, e| *id == ApiKeyId(1) && e.action == AuditAction::ApiKeyDeleted)
        .returning(|_, _, _| Ok(true));
    repo.expect_delete().withf(|_, id, _| *id == ApiKeyId(2)).returning(|_, _, _| Ok(false));
    let repo = service(repo);
    assert!(repo.delete(&admin(PlanTier::Free), &AuditContext::cli(), ApiKeyId(1)).await.is_ok());
    assert!(matches!(
        repo.delete(&admin(PlanTier::Advanced), &AuditContext::cli(), ApiKeyId(2)).await,
        Err(DeleteApiKeyError::NotFound(ApiKeyId(2)))
    ));
}

#[tokio::test]
async fn a_roll_stores_only_the_successors_digest_and_returns_it_once() {
    let mut repo = MockApiKeyRepository::new();
    repo.expect_roll()
        .withf(|ws, id, roll, e| {
            *ws == WorkspaceId(7)
                && *id == ApiKeyId(5)
                && roll.at == NOW
                && roll.grace.seconds() == 300
                && roll.created_by == UserId(3)
                && roll.masked_key.starts_with("wmsk_…")
                && e.action == AuditAction::ApiKeyRolled
                && e.details["grace_seconds"] == 300
                && !e.details.to_string().contains("wmsk_5")
        })
        .returning(|_, _, roll, _| {
            let new = stored(&NewApiKey {
                workspace_id: WorkspaceId(7),
                name: ApiKeyName::new("ci").expect("name"),
                digest: roll.digest,
                masked_key: roll.masked_key.clone(),
                expires_at: None,
                created_by: roll.created_by,
                scopes: ScopeSet::full(),
            });
            let old = ApiKey { id: ApiKeyId(5), revoked_at: Some(NOW), rolled_to: Some(new.id), ..new.clone() };
            Ok(RolledKeys { old, new })
        });
    let rolled = service(repo)
        .roll(&admin(PlanTier::Advanced), &AuditContext::cli(), ApiKeyId(5), RollApiKey { grace_seconds: Some(300) })
        .await
        .expect("rolled");
    assert_eq!(parse(&rolled.secret.secret).map(|t| t.digest), Ok(crate::auth::digest(&rolled.secret.secret)));
    assert_eq!(rolled.new.masked_key, rolled.secret.masked());
    assert_eq!(rolled.old.rolled_to, Some(rolled.new.id));
}

#[tokio::test]
async fn a_roll_is_refused_before_storage_for_agents_lower_plans_and_bad_grace() {
    let roll = |who: Caller, grace: Option<i64>| async move {
        // No expectation on the repository: a call would panic.
        service(MockApiKeyRepository::new())
            .roll(&who, &AuditContext::cli(), ApiKeyId(5), RollApiKey { grace_seconds: grace })
            .await
    };
    assert!(matches!(roll(agent(), Some(60)).await, Err(RollApiKeyError::Forbidden)));
    assert!(matches!(roll(admin(PlanTier::Growth), Some(60)).await, Err(RollApiKeyError::PlanRequired { .. })));
    for grace in [None, Some(-1), Some(604_801)] {
        let Err(RollApiKeyError::Invalid(e)) = roll(admin(PlanTier::Advanced), grace).await else { panic!("refused") };
        assert_eq!(e.0[0].field, "grace_seconds");
    }
}

#[tokio::test]
async fn a_roll_the_rule_refuses_is_reported_as_such() {
    let mut repo = MockApiKeyRepository::new();
    repo.expect_roll().returning(|_, _, _, _| Err(StoreRollError::Refused(RollRefusal::AlreadyRolled(ApiKeyId(9)))));
    let err = service(repo)
        .roll(&admin(PlanTier::Advanced), &AuditContext::cli(), ApiKeyId(5), RollApiKey { grace_seconds: Some(0) })
        .await
        .expect_err("refused");
    assert!(matches!(err, RollApiKeyError::Refused(RollRefusal::AlreadyRolled(ApiKeyId(9)))));
    let mut repo = MockApiKeyRepository::new();
    repo.expect_roll().returning(|_, _, _, _| Err(StoreRollError::NotFound));
    let err = service(repo)
        .roll(&admin(PlanTier::Advanced), &AuditContext::cli(), ApiKeyId(5), RollApiKey { grace_seconds: Some(0) })
        .await
        .expect_err("not found");
    assert!(matches!(err, RollApiKeyError::NotFound(ApiKeyId(5))));
}

#[tokio::test]
async fn a_blank_expiry_is_a_key_that_never_expires() {
    for blank in ["", "  "] {
        let mut repo = MockApiKeyRepository::new();
        repo.expect_insert().withf(|n, _| n.expires_at.is_none()).times(1).returning(|n, _| Ok(stored(n)));
        let created =
            service(repo).create(&admin(PlanTier::Advanced), &AuditContext::cli(), cmd("ci", Some(blank))).await;
        assert!(created.is_ok(), "{blank:?}");
    }
}
