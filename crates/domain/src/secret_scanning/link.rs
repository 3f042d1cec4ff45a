//! A one-time link's token found in an alert. Invitation and password-reset links carry `wmsu_`
//! tokens like login tokens do, and a live one is as dangerous in public: an invitation link lets
//! whoever opens it choose the invited account's password and join the workspace (when the account
//! has none yet), a reset link lets them choose a new password. So a live one is voided at once —
//! an invitation as re-sending it would, a reset link as using another would — and the people who
//! can act on it are told by e-mail (`docs/secret-scanning.md`).

use time::OffsetDateTime;

use super::alert::{found_at, LeakLabel, ReportedToken};
use crate::audit::{AuditAction, AuditContext, AuditEntry, AuditTarget};
use crate::auth::OneTimeLink;
use crate::mail::{Letter, Mail, MailLink, SiteUrl};
use crate::members::MemberStatus;
use crate::users::{Email, UserId};
use crate::workspace::WorkspaceId;

/// Where admins invite the person again.
const MEMBERS_PAGE: &str = "/settings/workspace/members";
/// Where the owner asks for a new reset link.
const RESET_PAGE: &str = "/password-reset";

/// What the store knows of the invitation a reported digest found: the facts
/// [`decide_invitation_leak`] decides on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeakedInvitation {
    /// The invitation's row id (never the token).
    pub id: i64,
    /// The workspace the link invites to.
    pub workspace_id: WorkspaceId,
    /// The workspace's name, for the admins' mail.
    pub workspace_name: String,
    /// The invited account.
    pub user_id: UserId,
    /// The invited address, as stored.
    pub invitee: String,
    /// The link: when it expires, and when it was used.
    pub link: OneTimeLink,
    /// The membership's status now; `None` when it was removed. Only a membership still
    /// `invited` is opened by its link.
    pub membership: Option<MemberStatus>,
    /// The workspace's active admins, who may invite the person again.
    pub admins: Vec<Email>,
}

impl LeakedInvitation {
    /// Whether the link still opens the invitation at `now`.
    pub fn is_live(&self, now: OffsetDateTime) -> bool {
        self.link.is_open(now) && self.membership == Some(MemberStatus::Invited)
    }
}

/// The voiding of a live leaked invitation link: its audit record and the admins' mails, written
/// with it in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct InvitationVoiding {
    /// The invitation to void (the membership stays `invited`, as when the link is re-sent).
    pub invitation_id: i64,
    /// `member.invitation_voided` by `system`, `details.reason` `leaked`.
    pub audit: AuditEntry,
    /// The notice to each admin.
    pub mails: Vec<Mail>,
}

/// What a leak report changes for the invitation it found (if any).
#[derive(Debug, Clone, PartialEq)]
pub struct InvitationLeakDecision {
    /// The answer for this token.
    pub label: LeakLabel,
    /// Void the link now, with this record and these mails.
    pub void: Option<InvitationVoiding>,
}

/// Decides on a reported `wmsu_` token whose digest found the invitation `invitation` at `now`.
/// Only a live link is a true positive: it is voided at once, recorded as
/// `member.invitation_voided` by `system` on the invited person (`details.reason` `leaked`,
/// `details.url` where it was found, never the token), and the workspace's admins are e-mailed
/// (the person can be invited again from the Members page). A used or expired link, or one whose
/// membership is no longer invited, is a false positive and changes nothing: it opens nothing.
pub fn decide_invitation_leak(
    invitation: &LeakedInvitation,
    reported: &ReportedToken,
    now: OffsetDateTime,
    site: &SiteUrl,
) -> InvitationLeakDecision {
    if !invitation.is_live(now) {
        return InvitationLeakDecision { label: LeakLabel::FalsePositive, void: None };
    }
    let audit = AuditContext::system().entry(
        invitation.workspace_id,
        AuditAction::MemberInvitationVoided,
        AuditTarget::user(Some(invitation.user_id.0)),
        serde_json::json!({
            "reason": "leaked",
            "url": reported.url,
            "source": reported.source,
            "email": invitation.invitee,
        }),
    );
    let mails = invitation_mails(invitation, reported.url.as_deref(), site);
    InvitationLeakDecision {
        label: LeakLabel::TruePositive,
        void: Some(InvitationVoiding { invitation_id: invitation.id, audit, mails }),
    }
}

/// The notice to each admin that `invitation`'s link was found at `url` and voided.
fn invitation_mails(invitation: &LeakedInvitation, url: Option<&str>, site: &SiteUrl) -> Vec<Mail> {
    let found = found_at(url);
    let letter = Letter {
        paragraphs: vec![
            format!(
                "GitHub secret scanning found the invitation link of {} to your wms workspace {} {found}. \
                 Whoever had it could have joined as that person, so wms voided it at once: it no longer \
                 opens the invitation.",
                invitation.invitee, invitation.workspace_name
            ),
            format!(
                "{} is still invited. To let them join, invite them again from the Members page: they \
                 get a new link by e-mail.",
                invitation.invitee
            ),
        ],
        link: Some(MailLink { label: "Open the Members page".into(), url: site.link(MEMBERS_PAGE) }),
        closing: vec!["You get this because you are an admin of the workspace.".into()],
    };
    let subject = format!("The invitation of {} was found in public and has been voided", invitation.invitee);
    invitation.admins.iter().map(|to| Mail::compose(to.clone(), &subject, &letter)).collect()
}

/// What the store knows of the password-reset link a reported digest found: the facts
/// [`decide_password_reset_leak`] decides on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeakedPasswordReset {
    /// The link's row id (never the token).
    pub id: i64,
    /// The account it resets.
    pub user_id: UserId,
    /// The account's address; `None` when the stored one no longer parses (the link is voided
    /// all the same).
    pub owner_email: Option<Email>,
    /// The link: when it expires, and when it was used or voided.
    pub link: OneTimeLink,
}

/// The voiding of a live leaked reset link, with the owner's mail, written with it in one
/// transaction. A reset belongs to the account, not to a workspace, so no workspace's audit log
/// records it (as no workspace's log records the reset itself).
#[derive(Debug, Clone, PartialEq)]
pub struct PasswordResetVoiding {
    /// The link to void.
    pub reset_id: i64,
    /// The notice to the account's owner (none without a usable address).
    pub mail: Option<Mail>,
}

/// What a leak report changes for the reset link it found (if any).
#[derive(Debug, Clone, PartialEq)]
pub struct PasswordResetLeakDecision {
    /// The answer for this token.
    pub label: LeakLabel,
    /// Void the link now, with this mail.
    pub void: Option<PasswordResetVoiding>,
}

/// Decides on a reported `wmsu_` token whose digest found the reset link `reset` at `now`. Only a
/// live link is a true positive: it is voided at once, as using another link of the account
/// would, and the account's owner e-mailed (the password is unchanged; a new link can be asked
/// for). A used, voided or expired link is a false positive and changes nothing.
pub fn decide_password_reset_leak(
    reset: &LeakedPasswordReset,
    reported: &ReportedToken,
    now: OffsetDateTime,
    site: &SiteUrl,
) -> PasswordResetLeakDecision {
    if !reset.link.is_open(now) {
        return PasswordResetLeakDecision { label: LeakLabel::FalsePositive, void: None };
    }
    let mail = reset.owner_email.clone().map(|to| reset_mail(to, reported.url.as_deref(), site));
    PasswordResetLeakDecision {
        label: LeakLabel::TruePositive,
        void: Some(PasswordResetVoiding { reset_id: reset.id, mail }),
    }
}

/// The notice to `to` that a reset link of theirs was found at `url` and voided.
fn reset_mail(to: Email, url: Option<&str>, site: &SiteUrl) -> Mail {
    let found = found_at(url);
    let letter = Letter {
        paragraphs: vec![
            format!(
                "GitHub secret scanning found a password reset link of your wms account {} {found}. \
                 Whoever had it could have chosen a new password for you, so wms voided it at once. \
                 Your password is unchanged.",
                to.as_str()
            ),
            "If you still want to reset your password, ask for a new link. If you did not ask for a \
             reset, someone else may have: your account is safe as long as your e-mail is."
                .into(),
        ],
        link: Some(MailLink { label: "Ask for a new link".into(), url: site.link(RESET_PAGE) }),
        closing: vec!["You get this because the link was for your account.".into()],
    };
    Mail::compose(to, "A password reset link of your wms account was found in public and has been voided", &letter)
}

#[cfg(test)]
#[path = "link_tests.rs"]
mod tests;
