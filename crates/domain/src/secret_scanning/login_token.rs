//! A member's login token (`wmsu_`) found in an alert: it signs in as that member wherever the
//! member may act, so a live one is revoked at once (as signing out would), recorded, and its
//! owner told by e-mail (`docs/secret-scanning.md`).

use time::OffsetDateTime;

use super::alert::{LeakLabel, ReportedToken};
use crate::audit::{AuditAction, AuditContext, AuditEntry, AuditTarget};
use crate::mail::{Letter, Mail, MailLink, SiteUrl};
use crate::users::{Email, UserId};
use crate::workspace::WorkspaceId;

/// The sign-in page, where the owner gets a new token.
const SIGN_IN_PAGE: &str = "/login";

/// What the store knows of the login token a reported digest found: the facts
/// [`decide_login_token_leak`] decides on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeakedLoginToken {
    /// The token's row id (never the token).
    pub id: i64,
    /// The workspace the token is bound to.
    pub workspace_id: WorkspaceId,
    /// Its owner.
    pub user_id: UserId,
    /// The owner's address; `None` when the stored one no longer parses (the token is revoked
    /// all the same).
    pub owner_email: Option<Email>,
    /// When it stops working by itself.
    pub expires_at: OffsetDateTime,
    /// When it was revoked (signed out), if it was.
    pub revoked_at: Option<OffsetDateTime>,
}

impl LeakedLoginToken {
    /// Whether it still signs in at `now`: neither revoked nor expired.
    pub fn is_live(&self, now: OffsetDateTime) -> bool {
        self.revoked_at.is_none_or(|at| at > now) && self.expires_at > now
    }
}

/// What a reported `wmsu_` token is: login tokens, invitation links and password-reset links
/// share the format, so its digest is looked up in each, and a login token wins over an
/// invitation, an invitation over a reset link (a digest is one credential's, the order only
/// settles what no real token can be twice).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserTokenHolder {
    /// A member's login token ([`decide_login_token_leak`]).
    Login,
    /// An invitation's link ([`super::decide_invitation_leak`]).
    Invitation,
    /// A password reset's link ([`super::decide_password_reset_leak`]).
    PasswordReset,
    /// Nothing holds it: a false positive ([`decide_login_token_leak`] over nothing).
    Nobody,
}

impl UserTokenHolder {
    /// The holder of a digest found (or not) among the login tokens, the invitations and the
    /// reset links.
    pub fn of(login: bool, invitation: bool, reset: bool) -> Self {
        match (login, invitation, reset) {
            (true, _, _) => UserTokenHolder::Login,
            (false, true, _) => UserTokenHolder::Invitation,
            (false, false, true) => UserTokenHolder::PasswordReset,
            (false, false, false) => UserTokenHolder::Nobody,
        }
    }

    /// Whether the links need looking up for a digest: only when no login token has it.
    pub fn may_be_a_link(login: bool) -> bool {
        !login
    }
}

/// The revocation of a live leaked login token: its audit record and the owner's mail, written
/// with the revocation in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct LoginTokenRevocation {
    /// `user.token_revoked` by `system`, `details.reason` `leaked`.
    pub audit: AuditEntry,
    /// The notice to the owner (none without a usable address).
    pub mail: Option<Mail>,
}

/// What a leak report changes for the login token it found (if any).
#[derive(Debug, Clone, PartialEq)]
pub struct LoginTokenLeakDecision {
    /// The answer for this token.
    pub label: LeakLabel,
    /// Revoke the token now, with this record and mail.
    pub revoke: Option<LoginTokenRevocation>,
}

/// Decides on a reported `wmsu_` token whose digest found `token` (or nothing) at `now`. Only a
/// live token is a true positive: it is revoked at once, recorded as `user.token_revoked` by
/// `system` on its owner (`details.reason` `leaked`, `details.url` where it was found, never the
/// token), and its owner e-mailed with links built on `site`. A revoked, expired or unknown
/// token is a false positive and changes nothing: it signs in as nobody.
pub fn decide_login_token_leak(
    token: Option<&LeakedLoginToken>,
    reported: &ReportedToken,
    now: OffsetDateTime,
    site: &SiteUrl,
) -> LoginTokenLeakDecision {
    let Some(token) = token.filter(|t| t.is_live(now)) else {
        return LoginTokenLeakDecision { label: LeakLabel::FalsePositive, revoke: None };
    };
    let audit = AuditContext::system().entry(
        token.workspace_id,
        AuditAction::UserTokenRevoked,
        AuditTarget::user(Some(token.user_id.0)),
        serde_json::json!({
            "reason": "leaked",
            "url": reported.url,
            "source": reported.source,
            "token_id": token.id,
        }),
    );
    let mail = token.owner_email.clone().map(|to| leak_mail(to, reported.url.as_deref(), site));
    LoginTokenLeakDecision { label: LeakLabel::TruePositive, revoke: Some(LoginTokenRevocation { audit, mail }) }
}

/// The notice to `to` that a login token of theirs was found at `url` and revoked.
fn leak_mail(to: Email, url: Option<&str>, site: &SiteUrl) -> Mail {
    let found = crate::secret_scanning::found_at(url);
    let letter = Letter {
        paragraphs: vec![
            format!(
                "GitHub secret scanning found a sign-in token (a login token, wmsu_…) of your wms account \
                 {} {found}. wms revoked it at once: requests made with it are refused from now on.",
                to.as_str()
            ),
            "If a script or tool used it, sign in again to get a new token, and remove the leaked token \
             from the repository and its history. If you did not put it there, change your password."
                .into(),
        ],
        link: Some(MailLink { label: "Sign in to wms".into(), url: site.link(SIGN_IN_PAGE) }),
        closing: vec!["You get this because the token was yours.".into()],
    };
    Mail::compose(to, "A sign-in token of your wms account was found in public and has been revoked", &letter)
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use crate::audit::ActorType;

    const NOW: OffsetDateTime = datetime!(2026-06-01 0:00 UTC);

    #[test]
    fn a_login_token_wins_then_an_invitation_then_a_reset_link() {
        assert_eq!(UserTokenHolder::of(true, true, true), UserTokenHolder::Login);
        assert_eq!(UserTokenHolder::of(false, true, true), UserTokenHolder::Invitation);
        assert_eq!(UserTokenHolder::of(false, false, true), UserTokenHolder::PasswordReset);
        assert_eq!(UserTokenHolder::of(false, false, false), UserTokenHolder::Nobody);
        assert!(UserTokenHolder::may_be_a_link(false) && !UserTokenHolder::may_be_a_link(true));
    }

    fn token() -> LeakedLoginToken {
        LeakedLoginToken {
            id: 31,
            workspace_id: WorkspaceId(2),
            user_id: UserId(7),
            owner_email: Some(Email::new("email", "ana@example.com").expect("email")),
            expires_at: NOW + time::Duration::hours(1),
            revoked_at: None,
        }
    }

    fn reported(token: &str) -> ReportedToken {
        ReportedToken {
            token: token.into(),
            token_type: "wms_login_token".into(),
            url: Some("https://github.com/o/r/blob/x/.env".into()),
            source: Some("content".into()),
        }
    }

    fn site() -> SiteUrl {
        SiteUrl::new("https://wms.example.com")
    }

    #[test]
    fn a_live_token_is_revoked_recorded_and_its_owner_told_without_the_token() {
        let secret = "wmsu_SecretPartThatMustNeverBeCopied";
        let decision = decide_login_token_leak(Some(&token()), &reported(secret), NOW, &site());
        assert_eq!(decision.label, LeakLabel::TruePositive);
        let revocation = decision.revoke.expect("revoked");
        let audit = &revocation.audit;
        assert_eq!(
            (audit.action, audit.context.actor.kind, audit.workspace_id, audit.target),
            (AuditAction::UserTokenRevoked, ActorType::System, WorkspaceId(2), Some(AuditTarget::user(Some(7))))
        );
        assert_eq!(audit.details["reason"], "leaked");
        assert_eq!(audit.details["url"], "https://github.com/o/r/blob/x/.env");
        assert_eq!(audit.details["token_id"], 31);
        let mail = revocation.mail.expect("mailed");
        assert_eq!(mail.to.as_str(), "ana@example.com");
        assert!(mail.text.contains("at https://github.com/o/r/blob/x/.env"));
        assert!(mail.text.contains("https://wms.example.com/login"));
        for written in [audit.details.to_string(), mail.text, mail.html, mail.subject] {
            assert!(!written.contains("SecretPart"), "{written}");
        }
    }

    #[test]
    fn a_token_without_a_usable_address_is_revoked_all_the_same() {
        let unmailable = LeakedLoginToken { owner_email: None, ..token() };
        let decision = decide_login_token_leak(Some(&unmailable), &reported("wmsu_x"), NOW, &site());
        assert_eq!(decision.label, LeakLabel::TruePositive);
        assert_eq!(decision.revoke.map(|r| r.mail), Some(None));
    }

    #[test]
    fn a_revoked_expired_or_unknown_token_is_a_false_positive_and_changes_nothing() {
        let nothing = LoginTokenLeakDecision { label: LeakLabel::FalsePositive, revoke: None };
        for dead in [
            LeakedLoginToken { revoked_at: Some(NOW - time::Duration::seconds(1)), ..token() },
            LeakedLoginToken { revoked_at: Some(NOW), ..token() },
            LeakedLoginToken { expires_at: NOW, ..token() },
        ] {
            assert_eq!(decide_login_token_leak(Some(&dead), &reported("wmsu_x"), NOW, &site()), nothing);
        }
        assert_eq!(decide_login_token_leak(None, &reported("wmsu_x"), NOW, &site()), nothing);
    }
}
