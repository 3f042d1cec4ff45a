//! Unit tests of [`MembersService`] on mocks.

use super::*;
use crate::access::{Actor, Surface};
use crate::common::ports::{MockClock, MockPasswordHasher, MockRandomSource};
use crate::members::MockMemberRepository;
use crate::workspace::{PlanTier, WorkspaceId};

fn service(repo: MockMemberRepository) -> MembersService {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(time::macros::datetime!(2026-11-23 12:00 UTC));
    let mut random = MockRandomSource::new();
    random.expect_fill().returning(|b| b.fill(7));
    MembersService::new(
        Arc::new(repo),
        Arc::new(MockPasswordHasher::new()),
        Arc::new(random),
        Arc::new(clock),
        SiteUrl::new("https://wms.test"),
        Arc::new(crate::auth::MockLoginThrottleStore::new()),
        crate::auth::ThrottlePolicy::default(),
    )
}

fn member(user: i64, role: Role) -> Caller {
    Caller {
        workspace_id: WorkspaceId(1),
        plan: PlanTier::Advanced,
        actor: Actor::Member { user_id: UserId(user), role },
        surface: Surface::RestApi,
    }
}

#[tokio::test]
async fn an_agent_cannot_promote_themselves_or_change_others() {
    let mut repo = MockMemberRepository::new();
    repo.expect_find().returning(|_, u| Ok(Some(profile(u, Role::Admin))));
    let s = service(repo);
    let promote = MemberChange::new(None, Some("admin"), None).expect("valid");
    assert!(matches!(
        s.update(&member(5, Role::Agent), &AuditContext::cli(), UserId(5), &promote).await,
        Err(UpdateMemberError::Forbidden(_))
    ));
    let rename = MemberChange::new(Some("X"), None, None).expect("valid");
    assert!(matches!(
        s.update(&member(5, Role::Agent), &AuditContext::cli(), UserId(1), &rename).await,
        Err(UpdateMemberError::Forbidden(_))
    ));
    assert!(matches!(
        s.remove(&member(5, Role::Agent), &AuditContext::cli(), UserId(1)).await,
        Err(RemoveMemberError::Forbidden(_))
    ));
}

#[tokio::test]
async fn an_admin_cannot_demote_or_remove_themselves() {
    let s = service(MockMemberRepository::new());
    let demote = MemberChange::new(None, Some("agent"), None).expect("valid");
    assert!(matches!(
        s.update(&member(1, Role::Admin), &AuditContext::cli(), UserId(1), &demote).await,
        Err(UpdateMemberError::Forbidden(_))
    ));
    assert!(matches!(
        s.remove(&member(1, Role::Admin), &AuditContext::cli(), UserId(1)).await,
        Err(RemoveMemberError::Forbidden(_))
    ));
}

#[tokio::test]
async fn a_member_may_rename_themselves_and_the_rename_is_recorded() {
    let mut repo = MockMemberRepository::new();
    let recorded = |audit: &[AuditEntry]| {
        audit.len() == 1
            && audit[0].action == AuditAction::MemberUpdated
            && audit[0].details == serde_json::json!({ "fields": ["name"], "name": "New" })
    };
    repo.expect_update().times(1).withf(move |_, _, _, audit, _| recorded(audit)).returning(|_, u, _, _, _| {
        Ok(MemberProfile {
            user_id: u,
            email: "a@b.io".into(),
            name: "New".into(),
            role: Role::Agent,
            status: crate::members::MemberStatus::Active,
            availability: crate::members::Availability::Online,
            created_at: time::macros::datetime!(2026-01-01 0:00 UTC),
        })
    });
    let rename = MemberChange::new(Some("New"), None, None).expect("valid");
    let p =
        service(repo).update(&member(5, Role::Agent), &AuditContext::cli(), UserId(5), &rename).await.expect("renamed");
    assert_eq!(p.name, "New");
}

#[tokio::test]
async fn bad_input_names_every_field_and_stores_nothing() {
    let s = service(MockMemberRepository::new());
    let cmd = AddMember { email: "nope".into(), name: Some(String::new()), role: "owner".into(), password: None };
    let Err(AddMemberFailure::Invalid(e)) = s.add(&member(1, Role::Admin), &AuditContext::cli(), cmd).await else {
        panic!("invalid")
    };
    let fields: Vec<&str> = e.0.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(fields, ["email", "role", "name"]);
}

#[tokio::test]
async fn a_made_up_invitation_costs_no_query() {
    let s = service(MockMemberRepository::new());
    assert!(matches!(
        s.accept_invitation("wmsu_nope", "long enough password", None, None).await,
        Err(AcceptInvitationError::Invalid)
    ));
}

#[tokio::test]
async fn the_storages_last_admin_refusal_is_the_removals_conflict() {
    let mut repo = MockMemberRepository::new();
    repo.expect_find().returning(|_, u| Ok(Some(profile(u, Role::Agent))));
    repo.expect_remove().times(1).returning(|_, _, _, _| Err(ChangeMemberError::LastAdmin));
    let e = service(repo).remove(&member(1, Role::Admin), &AuditContext::cli(), UserId(2)).await;
    assert!(matches!(e, Err(RemoveMemberError::LastAdmin)), "{e:?}");
}

fn profile(user: UserId, role: Role) -> MemberProfile {
    MemberProfile {
        user_id: user,
        email: "a@b.io".into(),
        name: "A".into(),
        role,
        status: crate::members::MemberStatus::Active,
        availability: crate::members::Availability::Online,
        created_at: time::macros::datetime!(2026-01-01 0:00 UTC),
    }
}

fn key(scopes: crate::access::Scope) -> Caller {
    Caller {
        workspace_id: WorkspaceId(1),
        plan: PlanTier::Advanced,
        actor: Actor::ApiKey { key_id: 9, scopes: crate::access::ScopeSet::of([scopes]) },
        surface: Surface::RestApi,
    }
}

#[tokio::test]
async fn a_key_never_touches_the_admin_role_and_nothing_is_stored() {
    let mut repo = MockMemberRepository::new();
    repo.expect_find_by_email().returning(|_, _| Ok(None));
    repo.expect_find().returning(|_, u| Ok(Some(profile(u, if u.0 == 2 { Role::Admin } else { Role::Agent }))));
    let s = service(repo);
    let k = key(crate::access::Scope::UsersWrite);
    let add = AddMember { email: "boss@x.test".into(), name: None, role: "admin".into(), password: None };
    assert!(matches!(s.add(&k, &AuditContext::cli(), add).await, Err(AddMemberFailure::Forbidden(_))));
    let promote = MemberChange::new(None, Some("admin"), None).expect("valid");
    assert!(matches!(
        s.update(&k, &AuditContext::cli(), UserId(3), &promote).await,
        Err(UpdateMemberError::Forbidden(_))
    ));
    let demote = MemberChange::new(None, Some("agent"), None).expect("valid");
    assert!(matches!(
        s.update(&k, &AuditContext::cli(), UserId(2), &demote).await,
        Err(UpdateMemberError::Forbidden(_))
    ));
    let off = MemberChange::new(None, None, Some(false)).expect("valid");
    assert!(matches!(s.update(&k, &AuditContext::cli(), UserId(2), &off).await, Err(UpdateMemberError::Forbidden(_))));
    assert!(matches!(s.remove(&k, &AuditContext::cli(), UserId(2)).await, Err(RemoveMemberError::Forbidden(_))));
}

#[tokio::test]
async fn only_the_operator_gives_someone_a_password_and_a_refusal_stores_nothing() {
    let s = service(MockMemberRepository::new());
    let app = Caller {
        actor: Actor::App { user_id: UserId(1), role: Role::Admin, scopes: crate::access::ScopeSet::full() },
        surface: Surface::Assistant,
        ..member(1, Role::Admin)
    };
    for who in [member(1, Role::Admin), member(5, Role::Agent), key(crate::access::Scope::UsersWrite), app] {
        let add = AddMember {
            email: "pw@x.test".into(),
            name: None,
            role: "agent".into(),
            password: Some("a long password".into()),
        };
        let refused = s.add(&who, &AuditContext::cli(), add).await;
        assert!(
            matches!(refused, Err(AddMemberFailure::Forbidden("only an operator can set a password for someone"))),
            "{who:?}: {refused:?}"
        );
    }
}
