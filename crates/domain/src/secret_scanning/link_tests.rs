use time::macros::datetime;

use super::*;
use crate::audit::ActorType;

const NOW: OffsetDateTime = datetime!(2026-06-01 0:00 UTC);
const SECRET: &str = "wmsu_SecretPartThatMustNeverBeCopied";

fn email(address: &str) -> Email {
    Email::new("email", address).expect("email")
}

fn invitation() -> LeakedInvitation {
    LeakedInvitation {
        id: 12,
        workspace_id: WorkspaceId(3),
        workspace_name: "Acme support".into(),
        user_id: UserId(9),
        invitee: "new.hire@example.com".into(),
        link: OneTimeLink { expires_at: NOW + time::Duration::days(6), used_at: None },
        membership: Some(MemberStatus::Invited),
        admins: vec![email("admin.one@example.com"), email("admin.two@example.com")],
    }
}

fn reset() -> LeakedPasswordReset {
    LeakedPasswordReset {
        id: 44,
        user_id: UserId(9),
        owner_email: Some(email("ana@example.com")),
        link: OneTimeLink { expires_at: NOW + time::Duration::minutes(40), used_at: None },
    }
}

fn reported() -> ReportedToken {
    ReportedToken {
        token: SECRET.into(),
        token_type: "wms_login_token".into(),
        url: Some("https://github.com/o/r/blob/x/mail.eml".into()),
        source: Some("content".into()),
    }
}

fn site() -> SiteUrl {
    SiteUrl::new("https://wms.example.com")
}

#[test]
fn a_live_invitation_link_is_voided_recorded_and_every_admin_told_without_the_token() {
    let decision = decide_invitation_leak(&invitation(), &reported(), NOW, &site());
    assert_eq!(decision.label, LeakLabel::TruePositive);
    let void = decision.void.expect("voided");
    assert_eq!(void.invitation_id, 12);
    let audit = &void.audit;
    assert_eq!(
        (audit.action, audit.context.actor.kind, audit.workspace_id, audit.target),
        (AuditAction::MemberInvitationVoided, ActorType::System, WorkspaceId(3), Some(AuditTarget::user(Some(9))))
    );
    assert_eq!(audit.details["reason"], "leaked");
    assert_eq!(audit.details["url"], "https://github.com/o/r/blob/x/mail.eml");
    assert_eq!(audit.details["email"], "new.hire@example.com");
    let to: Vec<&str> = void.mails.iter().map(|m| m.to.as_str()).collect();
    assert_eq!(to, ["admin.one@example.com", "admin.two@example.com"]);
    for mail in &void.mails {
        assert!(mail.text.contains("new.hire@example.com") && mail.text.contains("Acme support"));
        assert!(mail.text.contains("at https://github.com/o/r/blob/x/mail.eml"));
        assert!(mail.text.contains("https://wms.example.com/settings/workspace/members"));
    }
    let written = void.mails.iter().flat_map(|m| [m.text.clone(), m.html.clone(), m.subject.clone()]);
    for written in written.chain([audit.details.to_string()]) {
        assert!(!written.contains("SecretPart"), "{written}");
    }
}

#[test]
fn a_used_expired_or_settled_invitation_is_a_false_positive_and_changes_nothing() {
    let nothing = InvitationLeakDecision { label: LeakLabel::FalsePositive, void: None };
    for dead in [
        LeakedInvitation {
            link: OneTimeLink { used_at: Some(NOW - time::Duration::hours(1)), ..invitation().link },
            ..invitation()
        },
        LeakedInvitation { link: OneTimeLink { expires_at: NOW, ..invitation().link }, ..invitation() },
        LeakedInvitation { membership: Some(MemberStatus::Active), ..invitation() },
        LeakedInvitation { membership: None, ..invitation() },
    ] {
        assert_eq!(decide_invitation_leak(&dead, &reported(), NOW, &site()), nothing);
    }
}

#[test]
fn an_invitation_of_a_workspace_without_admins_is_voided_all_the_same() {
    let alone = LeakedInvitation { admins: vec![], ..invitation() };
    let decision = decide_invitation_leak(&alone, &reported(), NOW, &site());
    assert_eq!(decision.label, LeakLabel::TruePositive);
    assert_eq!(decision.void.map(|v| v.mails.len()), Some(0));
}

#[test]
fn a_live_reset_link_is_voided_and_its_owner_told_without_the_token() {
    let decision = decide_password_reset_leak(&reset(), &reported(), NOW, &site());
    assert_eq!(decision.label, LeakLabel::TruePositive);
    let void = decision.void.expect("voided");
    assert_eq!(void.reset_id, 44);
    let mail = void.mail.expect("mailed");
    assert_eq!(mail.to.as_str(), "ana@example.com");
    assert!(mail.text.contains("at https://github.com/o/r/blob/x/mail.eml"));
    assert!(mail.text.contains("https://wms.example.com/password-reset"));
    assert!(mail.text.contains("Your password is unchanged"));
    for written in [mail.text, mail.html, mail.subject] {
        assert!(!written.contains("SecretPart"), "{written}");
    }
    let unmailable = LeakedPasswordReset { owner_email: None, ..reset() };
    let decision = decide_password_reset_leak(&unmailable, &reported(), NOW, &site());
    assert_eq!(decision.void.map(|v| v.mail), Some(None), "voided all the same");
}

#[test]
fn a_used_or_expired_reset_link_is_a_false_positive_and_changes_nothing() {
    let nothing = PasswordResetLeakDecision { label: LeakLabel::FalsePositive, void: None };
    for dead in [
        LeakedPasswordReset {
            link: OneTimeLink { used_at: Some(NOW - time::Duration::minutes(1)), ..reset().link },
            ..reset()
        },
        LeakedPasswordReset { link: OneTimeLink { expires_at: NOW, ..reset().link }, ..reset() },
    ] {
        assert_eq!(decide_password_reset_leak(&dead, &reported(), NOW, &site()), nothing);
    }
}
