//! An app's OAuth token (`wmso_` access, `wmsr_` refresh) found in an alert: either one acts for
//! the member who granted the app access (a refresh token for as long as the grant lives), so a
//! live one revokes its whole grant at once, as the member revoking the app would, and the member
//! is told by e-mail (`docs/secret-scanning.md`).

use time::OffsetDateTime;

use super::alert::{LeakLabel, ReportedToken};
use crate::audit::{AuditAction, AuditContext, AuditEntry, AuditTarget};
use crate::mail::{Letter, Mail, MailLink, SiteUrl};
use crate::users::{Email, UserId};
use crate::workspace::WorkspaceId;

/// Where the member sees the apps they granted access.
const APPS_PAGE: &str = "/settings/account/connected-apps";

/// What the store knows of the app token a reported digest found, and of its grant: the facts
/// [`decide_app_token_leak`] decides on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeakedAppToken {
    /// The grant the token belongs to.
    pub grant_id: i64,
    /// The workspace of the grant.
    pub workspace_id: WorkspaceId,
    /// The member who granted it.
    pub user_id: UserId,
    /// The member's address; `None` when the stored one no longer parses (the grant is revoked
    /// all the same).
    pub owner_email: Option<Email>,
    /// The app's name, as it registered.
    pub client_name: String,
    /// When the token stops working by itself.
    pub expires_at: OffsetDateTime,
    /// When the grant was revoked, if it was (at the alert's own instant: by this alert, for
    /// another of its tokens).
    pub grant_revoked_at: Option<OffsetDateTime>,
}

/// The revocation of a leaked app token's grant: its audit record and the member's mail, written
/// with the revocation in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct AppGrantRevocation {
    /// The grant to revoke.
    pub grant_id: i64,
    /// `oauth.revoked` by `system`, `details.reason` `leaked`.
    pub audit: AuditEntry,
    /// The notice to the member (none without a usable address).
    pub mail: Option<Mail>,
}

/// What a leak report changes for the app token it found (if any).
#[derive(Debug, Clone, PartialEq)]
pub struct AppTokenLeakDecision {
    /// The answer for this token.
    pub label: LeakLabel,
    /// Revoke the token's grant now, with this record and mail.
    pub revoke: Option<AppGrantRevocation>,
}

/// Decides on a reported `wmso_`/`wmsr_` token whose digest found `token` (or nothing) at `now`.
/// Only a live token is a true positive: its grant is revoked at once (every token of it stops
/// working), recorded as `oauth.revoked` by `system` on the grant (`details.reason` `leaked`,
/// `details.url` where it was found, never the token), and the member who granted it e-mailed
/// with links built on `site`. A token of a revoked grant, an expired or an unknown one is a false
/// positive and changes nothing.
pub fn decide_app_token_leak(
    token: Option<&LeakedAppToken>,
    reported: &ReportedToken,
    now: OffsetDateTime,
    site: &SiteUrl,
) -> AppTokenLeakDecision {
    // A refresh token already exchanged is still its live grant's: presenting it revokes the grant
    // anyway, and whoever holds it may hold its successor.
    let Some(token) = token.filter(|t| t.expires_at > now) else {
        return AppTokenLeakDecision { label: LeakLabel::FalsePositive, revoke: None };
    };
    match token.grant_revoked_at {
        None => {}
        // Another token of the grant in the same alert revoked it: this one was live too.
        Some(at) if at == now => return AppTokenLeakDecision { label: LeakLabel::TruePositive, revoke: None },
        Some(_) => return AppTokenLeakDecision { label: LeakLabel::FalsePositive, revoke: None },
    }
    let audit = AuditContext::system().entry(
        token.workspace_id,
        AuditAction::OAuthRevoked,
        AuditTarget::oauth_grant(Some(token.grant_id)),
        serde_json::json!({
            "reason": "leaked",
            "client_name": token.client_name,
            "url": reported.url,
            "source": reported.source,
        }),
    );
    let mail = token.owner_email.clone().map(|to| leak_mail(to, &token.client_name, reported.url.as_deref(), site));
    AppTokenLeakDecision {
        label: LeakLabel::TruePositive,
        revoke: Some(AppGrantRevocation { grant_id: token.grant_id, audit, mail }),
    }
}

/// The notice to `to` that a token of the app `client_name` acting for them was found at `url`
/// and the app's access revoked.
fn leak_mail(to: Email, client_name: &str, url: Option<&str>, site: &SiteUrl) -> Mail {
    let found = crate::secret_scanning::found_at(url);
    let letter = Letter {
        paragraphs: vec![
            format!(
                "GitHub secret scanning found a token of the app \u{201c}{client_name}\u{201d}, which acts for \
                 your wms account {}, {found}. wms revoked the app's access at once: none of its tokens \
                 work any more.",
                to.as_str()
            ),
            "If you still use the app, connect it again to grant it new access. Whoever published the \
             token should remove it from the repository and its history."
                .into(),
        ],
        link: Some(MailLink { label: "Your connected apps in wms".into(), url: site.link(APPS_PAGE) }),
        closing: vec!["You get this because you granted the app its access.".into()],
    };
    Mail::compose(to, "An app's access to your wms account was found in public and has been revoked", &letter)
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use crate::audit::ActorType;

    const NOW: OffsetDateTime = datetime!(2026-06-01 0:00 UTC);

    fn token() -> LeakedAppToken {
        LeakedAppToken {
            grant_id: 12,
            workspace_id: WorkspaceId(2),
            user_id: UserId(7),
            owner_email: Some(Email::new("email", "ana@example.com").expect("email")),
            client_name: "Claude".into(),
            expires_at: NOW + time::Duration::hours(1),
            grant_revoked_at: None,
        }
    }

    fn reported(token: &str) -> ReportedToken {
        ReportedToken {
            token: token.into(),
            token_type: "wms_app_token".into(),
            url: Some("https://github.com/o/r/blob/x/.env".into()),
            source: Some("content".into()),
        }
    }

    fn site() -> SiteUrl {
        SiteUrl::new("https://wms.example.com")
    }

    #[test]
    fn a_live_token_revokes_its_grant_recorded_and_told_without_the_token() {
        let secret = "wmsr_SecretPartThatMustNeverBeCopied";
        let decision = decide_app_token_leak(Some(&token()), &reported(secret), NOW, &site());
        assert_eq!(decision.label, LeakLabel::TruePositive);
        let revocation = decision.revoke.expect("revoked");
        assert_eq!(revocation.grant_id, 12);
        let audit = &revocation.audit;
        assert_eq!(
            (audit.action, audit.context.actor.kind, audit.workspace_id, audit.target),
            (AuditAction::OAuthRevoked, ActorType::System, WorkspaceId(2), Some(AuditTarget::oauth_grant(Some(12))))
        );
        assert_eq!(audit.details["reason"], "leaked");
        assert_eq!(audit.details["client_name"], "Claude");
        assert_eq!(audit.details["url"], "https://github.com/o/r/blob/x/.env");
        let mail = revocation.mail.expect("mailed");
        assert_eq!(mail.to.as_str(), "ana@example.com");
        assert!(mail.text.contains("Claude"));
        assert!(mail.text.contains("at https://github.com/o/r/blob/x/.env"));
        assert!(mail.text.contains("https://wms.example.com/settings/account/connected-apps"));
        for written in [audit.details.to_string(), mail.text, mail.html, mail.subject] {
            assert!(!written.contains("SecretPart"), "{written}");
        }
    }

    #[test]
    fn a_grant_without_a_usable_address_is_revoked_all_the_same() {
        let unmailable = LeakedAppToken { owner_email: None, ..token() };
        let decision = decide_app_token_leak(Some(&unmailable), &reported("wmso_x"), NOW, &site());
        assert_eq!(decision.label, LeakLabel::TruePositive);
        assert_eq!(decision.revoke.map(|r| r.mail), Some(None));
    }

    #[test]
    fn a_token_of_a_revoked_grant_an_expired_or_an_unknown_one_is_a_false_positive() {
        let nothing = AppTokenLeakDecision { label: LeakLabel::FalsePositive, revoke: None };
        for dead in [
            LeakedAppToken { grant_revoked_at: Some(NOW - time::Duration::seconds(1)), ..token() },
            LeakedAppToken { expires_at: NOW, ..token() },
            LeakedAppToken { expires_at: NOW, grant_revoked_at: Some(NOW), ..token() },
        ] {
            assert_eq!(decide_app_token_leak(Some(&dead), &reported("wmso_x"), NOW, &site()), nothing);
        }
        assert_eq!(decide_app_token_leak(None, &reported("wmso_x"), NOW, &site()), nothing);
    }

    #[test]
    fn a_second_token_of_a_grant_this_alert_revoked_is_a_true_positive_revoked_once() {
        let sibling = LeakedAppToken { grant_revoked_at: Some(NOW), ..token() };
        assert_eq!(
            decide_app_token_leak(Some(&sibling), &reported("wmso_x"), NOW, &site()),
            AppTokenLeakDecision { label: LeakLabel::TruePositive, revoke: None }
        );
    }
}
