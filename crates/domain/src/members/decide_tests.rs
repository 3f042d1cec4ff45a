use serde_json::json;
use time::macros::datetime;

use super::*;
use crate::audit::{AuditContext, AuditTarget};
use crate::workspace::WorkspaceId;

fn facts(role: Role, status: MemberStatus) -> MemberFacts {
    MemberFacts { role, status, joined: true, name: "Ann".into(), email: "ann@example.com".into() }
}

fn entry(action: AuditAction, details: serde_json::Value) -> AuditEntry {
    AuditContext::cli().entry(WorkspaceId(1), action, AuditTarget::user(Some(7)), details)
}

#[test]
fn only_active_admins_are_told_about_the_workspace() {
    for status in [MemberStatus::Invited, MemberStatus::Active, MemberStatus::Deactivated] {
        for role in [Role::Admin, Role::Agent] {
            let told = told_about_workspace(role, status);
            assert_eq!(told, role == Role::Admin && status == MemberStatus::Active, "{role:?} {status:?}");
        }
    }
}

fn change(name: Option<&str>, role: Option<&str>, active: Option<bool>) -> MemberChange {
    MemberChange::new(name, role, active).expect("valid")
}

#[test]
fn the_last_active_admin_cannot_be_demoted_or_deactivated() {
    let admin = facts(Role::Admin, MemberStatus::Active);
    for c in [change(None, Some("agent"), None), change(None, None, Some(false))] {
        assert!(matches!(decide_change(&admin, Some(0), &c, &[]), Err(ChangeMemberError::LastAdmin)));
        assert!(decide_change(&admin, Some(1), &c, &[]).is_ok());
    }
}

#[test]
fn an_admin_count_that_was_not_read_never_lets_the_last_admin_go() {
    let admin = facts(Role::Admin, MemberStatus::Active);
    let demotion = change(None, Some("agent"), None);
    assert!(matches!(decide_change(&admin, None, &demotion, &[]), Err(ChangeMemberError::LastAdmin)));
}

#[test]
fn changes_that_keep_admin_rights_need_no_other_admin() {
    let admin = facts(Role::Admin, MemberStatus::Active);
    let rename = change(Some("Bea"), None, None);
    assert!(decide_change(&admin, Some(0), &rename, &[]).is_ok());
    let inactive_admin = facts(Role::Admin, MemberStatus::Deactivated);
    assert!(decide_change(&inactive_admin, None, &change(None, Some("agent"), None), &[]).is_ok());
    let agent = facts(Role::Agent, MemberStatus::Active);
    assert!(decide_change(&agent, None, &change(None, None, Some(false)), &[]).is_ok());
}

#[test]
fn the_last_active_admin_cannot_be_removed_but_others_can() {
    let removal = entry(AuditAction::MemberRemoved, json!({}));
    let admin = facts(Role::Admin, MemberStatus::Active);
    assert!(matches!(decide_removal(&admin, Some(0), &removal), Err(ChangeMemberError::LastAdmin)));
    let record = decide_removal(&admin, Some(2), &removal).expect("another admin stays");
    assert_eq!(record.details, json!({ "email": "ann@example.com" }));
    let invited_admin = facts(Role::Admin, MemberStatus::Invited);
    assert!(decide_removal(&invited_admin, None, &removal).is_ok());
}

#[test]
fn records_carry_what_was_before_and_a_same_name_is_not_recorded() {
    let agent = facts(Role::Agent, MemberStatus::Active);
    let entries = [
        entry(AuditAction::MemberUpdated, json!({ "fields": ["name"], "name": "Ann" })),
        entry(AuditAction::MemberRoleChanged, json!({ "role": "admin" })),
    ];
    let same = decide_change(&agent, None, &change(Some("Ann"), Some("admin"), None), &entries).expect("allowed");
    assert_eq!(same.audit.len(), 1);
    assert_eq!(same.audit[0].details, json!({ "role": "admin", "previous_role": "agent" }));
    assert_eq!(same.name.as_ref().map(PersonName::as_str), Some("Ann"), "the name is still written");

    let renamed = [entry(AuditAction::MemberUpdated, json!({ "fields": ["name"], "name": "Bea" }))];
    let w = decide_change(&agent, None, &change(Some("Bea"), None, None), &renamed).expect("allowed");
    assert_eq!(w.audit[0].details, json!({ "fields": ["name"], "name": "Bea", "previous_name": "Ann" }));
}

#[test]
fn a_reactivation_invites_again_whoever_never_accepted() {
    let never_joined = MemberFacts { joined: false, ..facts(Role::Agent, MemberStatus::Deactivated) };
    let w = decide_change(&never_joined, None, &change(None, None, Some(true)), &[]).expect("allowed");
    assert_eq!(w.status, Some(MemberStatus::Invited));
    let joined = facts(Role::Agent, MemberStatus::Deactivated);
    let w = decide_change(&joined, None, &change(None, None, Some(true)), &[]).expect("allowed");
    assert_eq!(w.status, Some(MemberStatus::Active));
    let w = decide_change(&joined, None, &change(Some("Bea"), None, None), &[]).expect("allowed");
    assert_eq!(w.status, None, "no activity change writes no status");
}

#[test]
fn an_admission_invites_or_activates_and_refuses_members() {
    let now = datetime!(2026-11-27 10:00 UTC);
    let invited = decide_admission(None, false, AddedAccount::New, now).expect("new");
    assert_eq!((invited.reinvite, invited.status, invited.joined_at), (false, MemberStatus::Invited, None));
    let vouched = decide_admission(Some(MemberStatus::Invited), true, AddedAccount::WithPassword, now).expect("again");
    assert_eq!((vouched.reinvite, vouched.status, vouched.joined_at), (true, MemberStatus::Active, Some(now)));
    let new = decide_admission(None, true, AddedAccount::New, now).expect("new");
    assert_eq!(new.status, MemberStatus::Active, "a new account takes the operator's password");
    for s in [MemberStatus::Active, MemberStatus::Deactivated] {
        assert!(matches!(decide_admission(Some(s), false, AddedAccount::New, now), Err(AddMemberError::AlreadyMember)));
    }
}

#[test]
fn an_account_without_a_password_is_invited_even_when_the_operator_vouches() {
    let now = datetime!(2026-11-27 10:00 UTC);
    for existing in [None, Some(MemberStatus::Invited)] {
        let w = decide_admission(existing, true, AddedAccount::WithoutPassword, now).expect("added");
        assert_eq!((w.status, w.joined_at), (MemberStatus::Invited, None), "{existing:?}");
    }
}

fn invitation(password: Option<&str>) -> InvitationFacts {
    InvitationFacts {
        workspace_id: WorkspaceId(3),
        workspace_name: "Acme".into(),
        user_id: UserId(9),
        email: "new@example.com".into(),
        password_hash: password.map(|h| PasswordHash(h.into())),
        link: crate::auth::OneTimeLink { expires_at: NOW + time::Duration::days(1), used_at: None },
        membership: MemberStatus::Invited,
    }
}

const NOW: OffsetDateTime = datetime!(2026-06-01 12:00 UTC);

#[test]
fn an_open_invitation_is_accepted_with_the_first_password_of_an_account_without_one() {
    let chosen = PasswordHash("$argon2id$chosen".into());
    let acceptance = decide_acceptance(&invitation(None), NOW, Some(chosen.clone())).expect("accepted");
    assert_eq!(
        acceptance,
        InvitationAcceptance {
            accepted: AcceptedInvitation { workspace_id: WorkspaceId(3), user_id: UserId(9) },
            at: NOW,
            password: Some(chosen),
        }
    );
}

#[test]
fn an_account_with_a_password_joins_without_a_new_one() {
    let acceptance = decide_acceptance(&invitation(Some("$argon2id$kept")), NOW, None).expect("accepted");
    assert_eq!(acceptance.password, None);
}

#[test]
fn the_link_never_changes_a_password_an_account_has() {
    // Another submission set one between this one's check and its transaction.
    let chosen = PasswordHash("$argon2id$chosen".into());
    assert_eq!(decide_acceptance(&invitation(Some("$argon2id$set meanwhile")), NOW, Some(chosen)), None);
}

#[test]
fn an_account_without_a_password_cannot_join_without_choosing_one() {
    assert_eq!(decide_acceptance(&invitation(None), NOW, None), None);
}

#[test]
fn a_used_expired_or_settled_invitation_is_refused() {
    let chosen = || Some(PasswordHash("$argon2id$chosen".into()));
    let open = invitation(None);
    for closed in [
        InvitationFacts { link: crate::auth::OneTimeLink { used_at: Some(NOW), ..open.link }, ..open.clone() },
        InvitationFacts { link: crate::auth::OneTimeLink { expires_at: NOW, ..open.link }, ..open.clone() },
        InvitationFacts { membership: MemberStatus::Active, ..open.clone() },
        InvitationFacts { membership: MemberStatus::Deactivated, ..open.clone() },
    ] {
        assert!(!closed.is_open(NOW));
        assert_eq!(decide_acceptance(&closed, NOW, chosen()), None, "{closed:?}");
    }
}

#[test]
fn a_caller_who_manages_agents_only_never_touches_an_admin_however_the_role_came() {
    let admin = facts(Role::Admin, MemberStatus::Active);
    let agent = facts(Role::Agent, MemberStatus::Active);
    let deactivate = change(None, None, Some(false));
    assert!(matches!(MemberRights::AgentsOnly.allow_change(&admin, &deactivate), Err(ChangeMemberError::AdminsOnly)));
    assert!(MemberRights::AgentsOnly.allow_change(&agent, &deactivate).is_ok());
    assert!(matches!(
        MemberRights::AgentsOnly.allow_change(&agent, &change(None, Some("admin"), None)),
        Err(ChangeMemberError::AdminsOnly)
    ));
    assert!(MemberRights::AdminsToo.allow_change(&admin, &deactivate).is_ok());
    assert!(matches!(MemberRights::AgentsOnly.allow_removal(&admin), Err(ChangeMemberError::AdminsOnly)));
    assert!(MemberRights::AgentsOnly.allow_removal(&agent).is_ok());
    assert!(MemberRights::AdminsToo.allow_removal(&admin).is_ok());
}
