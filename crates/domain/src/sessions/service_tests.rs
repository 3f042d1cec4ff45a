//! Unit tests of the settings pages' sessions, on mocks.

use time::macros::datetime;

use super::*;
use crate::auth::{LoginUser, MockCredentialStore, MockLoginThrottleStore, MockUserDirectory, ThrottlePolicy};
use crate::common::ports::{MockClock, MockPasswordHasher, MockRandomSource, PasswordHash};
use crate::sessions::MockSessionRepository;
use crate::users::Role;
use crate::workspace::PlanTier;

const NOW: OffsetDateTime = datetime!(2026-11-20 12:00 UTC);

struct World {
    users: MockUserDirectory,
    credentials: MockCredentialStore,
    throttle: MockLoginThrottleStore,
    hasher: MockPasswordHasher,
    clock: MockClock,
    random: MockRandomSource,
    audit: crate::audit::MockAuditRepository,
}

impl World {
    fn new() -> Self {
        let mut clock = MockClock::new();
        clock.expect_now().return_const(NOW);
        let mut random = MockRandomSource::new();
        random.expect_fill().returning(|b| b.fill(9));
        let mut hasher = MockPasswordHasher::new();
        hasher.expect_verify().returning(|pw, _| pw.expose() == "right password");
        let mut users = MockUserDirectory::new();
        users.expect_find_by_email().returning(|_| {
            Ok(Some(LoginUser {
                id: UserId(4),
                email: "ann@example.com".into(),
                name: "Ann".into(),
                password_hash: PasswordHash("$real".into()),
            }))
        });
        // A wrong password is recorded in the account's workspaces (none here).
        users.expect_memberships().returning(|_| Ok(Vec::new()));
        let mut throttle = MockLoginThrottleStore::new();
        throttle.expect_reserve().returning(|_, _, _| Ok(None));
        throttle.expect_release().returning(|_, _| Ok(()));
        let mut audit = crate::audit::MockAuditRepository::new();
        audit.expect_record().returning(|_| Ok(()));
        Self { users, credentials: MockCredentialStore::new(), throttle, hasher, clock, random, audit }
    }

    fn ports(&self) -> LoginPorts<'_> {
        LoginPorts {
            users: &self.users,
            credentials: &self.credentials,
            throttle: &self.throttle,
            hasher: &self.hasher,
            clock: &self.clock,
            random: &self.random,
            audit: &self.audit,
        }
    }
}

fn settings() -> LoginSettings {
    LoginSettings {
        token_ttl: Duration::hours(24),
        throttle: ThrottlePolicy::default(),
        dummy_hash: PasswordHash("$dummy".into()),
    }
}

fn choice(ws: i64) -> WorkspaceChoice {
    WorkspaceChoice {
        id: WorkspaceId(ws),
        name: format!("W{ws}"),
        plan: PlanTier::Growth,
        role: Role::Admin,
        standing: crate::auth::Standing::ACTIVE,
    }
}

fn service(repo: MockSessionRepository) -> SessionService {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(NOW);
    let mut random = MockRandomSource::new();
    random.expect_fill().returning(|b| b.fill(3));
    SessionService { repo: Arc::new(repo), clock: Arc::new(clock), random: Arc::new(random), ttl: Duration::hours(12) }
}

fn req(password: &str, ws: Option<i64>) -> LoginRequest {
    LoginRequest {
        email: "ann@example.com".into(),
        password: password.into(),
        workspace_id: ws.map(WorkspaceId),
        client: None,
        context: crate::audit::AuditContext::system(),
    }
}

fn stored(workspace_id: Option<i64>) -> Session {
    Session {
        id: 1,
        user_id: UserId(4),
        user_email: "ann@example.com".into(),
        workspace_id: workspace_id.map(WorkspaceId),
        created_at: NOW - Duration::hours(1),
        expires_at: NOW + Duration::hours(11),
        revoked_at: None,
    }
}

fn cookie() -> String {
    let mut r = MockRandomSource::new();
    r.expect_fill().returning(|b| b.fill(3));
    SessionSecret::generate(&r).expose().to_owned()
}

#[tokio::test]
async fn a_member_of_one_workspace_gets_a_session_there_that_expires() {
    let w = World::new();
    let mut repo = MockSessionRepository::new();
    repo.expect_workspaces_of().returning(|_| Ok(vec![choice(3)]));
    repo.expect_delete_ended().withf(|t| *t == NOW - KEEP_ENDED).returning(|_| Ok(0));
    repo.expect_insert()
        .withf(|s, records| {
            s.user_id == UserId(4)
                && s.workspace_id == Some(WorkspaceId(3))
                && s.expires_at == NOW + Duration::hours(12)
                && records.iter().map(|r| (r.action, r.workspace_id)).collect::<Vec<_>>()
                    == [(AuditAction::UserSignedIn, WorkspaceId(3))]
        })
        .times(1)
        .returning(|_, _| Ok(SignInStored::Stored));
    let ok = service(repo).sign_in(w.ports(), &settings(), req("right password", None)).await.expect("signed in");
    assert_eq!(ok.workspace_id, Some(WorkspaceId(3)));
    assert_eq!(ok.secret.expose(), cookie());
}

#[tokio::test]
async fn a_password_changed_after_its_check_opens_no_session() {
    let w = World::new();
    let mut repo = MockSessionRepository::new();
    repo.expect_workspaces_of().returning(|_| Ok(vec![choice(3)]));
    repo.expect_delete_ended().returning(|_| Ok(0));
    repo.expect_insert()
        .withf(|s, _| s.proof == SignInProof::Password(PasswordHash("$real".into())))
        .times(1)
        .returning(|_, _| Ok(SignInStored::PasswordChanged));
    let err = service(repo).sign_in(w.ports(), &settings(), req("right password", None)).await;
    assert!(matches!(err, Err(LoginError::InvalidCredentials)), "{err:?}");
}

#[tokio::test]
async fn a_member_of_several_picks_later_or_names_one_of_them() {
    let w = World::new();
    let mut repo = MockSessionRepository::new();
    repo.expect_workspaces_of().returning(|_| Ok(vec![choice(3), choice(8)]));
    repo.expect_delete_ended().returning(|_| Ok(0));
    // Picking later: recorded in each workspace of the account; naming one: in that one.
    repo.expect_insert()
        .withf(|s, records| {
            let in_ws: Vec<i64> = records.iter().map(|r| r.workspace_id.0).collect();
            match s.workspace_id {
                None => in_ws == [3, 8],
                Some(ws) => in_ws == [ws.0],
            }
        })
        .times(2)
        .returning(|_, _| Ok(SignInStored::Stored));
    let svc = service(repo);
    let later = svc.sign_in(w.ports(), &settings(), req("right password", None)).await.expect("signed in");
    assert_eq!(later.workspace_id, None);
    let named = svc.sign_in(w.ports(), &settings(), req("right password", Some(8))).await.expect("signed in");
    assert_eq!(named.workspace_id, Some(WorkspaceId(8)));
    let foreign = svc.sign_in(w.ports(), &settings(), req("right password", Some(5))).await;
    assert!(matches!(foreign, Err(LoginError::Invalid(_))));
}

#[tokio::test]
async fn a_wrong_password_opens_nothing_and_counts_a_failure() {
    let mut w = World::new();
    // Reserved once and never given back: the reservation is the failure.
    w.throttle = MockLoginThrottleStore::new();
    w.throttle.expect_reserve().times(1).returning(|_, _, _| Ok(None));
    let repo = MockSessionRepository::new(); // any call would panic
    let err = service(repo).sign_in(w.ports(), &settings(), req("wrong", None)).await;
    assert!(matches!(err, Err(LoginError::InvalidCredentials)));
}

#[tokio::test]
async fn malformed_expired_and_revoked_cookies_are_signed_out() {
    let repo = MockSessionRepository::new();
    assert_eq!(service(repo).state("garbage").await.ok(), Some(SessionState::SignedOut));

    for ended in [
        Session { expires_at: NOW, ..stored(Some(3)) },
        Session { revoked_at: Some(NOW - Duration::minutes(1)), ..stored(Some(3)) },
    ] {
        let mut repo = MockSessionRepository::new();
        repo.expect_find().return_once(move |_| Ok(Some(ended)));
        assert_eq!(service(repo).state(&cookie()).await.ok(), Some(SessionState::SignedOut));
    }
}

#[tokio::test]
async fn a_session_carries_the_current_role_and_plan_and_ends_with_the_membership() {
    let mut repo = MockSessionRepository::new();
    repo.expect_find().returning(|_| Ok(Some(stored(Some(3)))));
    repo.expect_workspaces_of().return_once(|_| Ok(vec![choice(3), choice(8)]));
    let Ok(SessionState::InWorkspace { caller, workspace_name, workspace_count, .. }) =
        service(repo).state(&cookie()).await
    else {
        panic!("expected a workspace session");
    };
    assert_eq!(
        (caller.workspace_id, caller.plan, caller.member(), caller.surface),
        (WorkspaceId(3), PlanTier::Growth, Some((UserId(4), Role::Admin)), crate::access::Surface::Settings)
    );
    assert_eq!((workspace_name.as_str(), workspace_count), ("W3", 2));

    let mut repo = MockSessionRepository::new();
    repo.expect_find().returning(|_| Ok(Some(stored(Some(3)))));
    repo.expect_workspaces_of().return_once(|_| Ok(vec![choice(8)]));
    assert_eq!(service(repo).state(&cookie()).await.ok(), Some(SessionState::SignedOut));

    // Still stored, but deactivated (or its workspace switched off): signed out all the same, and
    // not counted among the user's workspaces.
    for standing in [
        crate::auth::Standing { member_active: false, workspace_active: true },
        crate::auth::Standing { member_active: true, workspace_active: false },
    ] {
        let mut repo = MockSessionRepository::new();
        repo.expect_find().returning(|_| Ok(Some(stored(Some(3)))));
        repo.expect_workspaces_of()
            .return_once(move |_| Ok(vec![WorkspaceChoice { standing, ..choice(3) }, choice(8)]));
        assert_eq!(service(repo).state(&cookie()).await.ok(), Some(SessionState::SignedOut), "{standing:?}");
    }
}

#[tokio::test]
async fn a_sessions_member_counts_only_while_active_in_an_active_workspace() {
    use crate::auth::{SessionLookup, Standing, StoredMember, WorkspaceMember};
    let stored = |standing| StoredMember {
        member: WorkspaceMember {
            workspace_id: WorkspaceId(3),
            plan: PlanTier::Growth,
            user_id: UserId(4),
            role: Role::Agent,
        },
        standing,
    };
    for (standing, counts) in [
        (Standing::ACTIVE, true),
        (Standing { member_active: false, workspace_active: true }, false),
        (Standing { member_active: true, workspace_active: false }, false),
    ] {
        let mut repo = MockSessionRepository::new();
        repo.expect_member().return_once(move |_, _| Ok(Some(stored(standing))));
        let found = service(repo).member(WorkspaceId(3), UserId(4)).await.expect("read");
        assert_eq!(found.is_some(), counts, "{standing:?}");
    }
}

#[tokio::test]
async fn the_workspace_is_picked_once_among_the_users_own() {
    let mut repo = MockSessionRepository::new();
    repo.expect_find().returning(|_| Ok(Some(stored(None))));
    repo.expect_workspaces_of().returning(|_| Ok(vec![choice(3), choice(8)]));
    repo.expect_set_workspace().withf(|_, ws| *ws == WorkspaceId(8)).times(1).returning(|_, _| Ok(true));
    let svc = service(repo);
    assert!(svc.choose_workspace(&cookie(), WorkspaceId(8)).await.is_ok());
    let foreign = svc.choose_workspace(&cookie(), WorkspaceId(5)).await;
    assert!(matches!(foreign, Err(ChooseWorkspaceError::Invalid(_))));

    let mut repo = MockSessionRepository::new();
    repo.expect_find().returning(|_| Ok(Some(stored(Some(3)))));
    let switch = service(repo).choose_workspace(&cookie(), WorkspaceId(8)).await;
    assert!(matches!(switch, Err(ChooseWorkspaceError::Invalid(_))));
}

#[tokio::test]
async fn sign_out_revokes_on_the_server_and_the_hook_reports_the_workspace() {
    let mut repo = MockSessionRepository::new();
    repo.expect_revoke().withf(|_, at| *at == NOW).times(1).returning(|_, _| Ok(()));
    repo.expect_find().returning(|_| Ok(Some(stored(Some(3)))));
    let svc = service(repo);
    assert!(svc.sign_out(&cookie()).await.is_ok());
    assert!(svc.sign_out("garbage").await.is_ok());
    let user = svc.user_for_session(&cookie()).await.ok().flatten();
    assert_eq!(user, Some(SessionUser { user_id: UserId(4), workspace_id: Some(WorkspaceId(3)) }));
}
