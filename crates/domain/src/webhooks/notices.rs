//! The e-mails the workspace's admins get about a destination's health: when it starts failing
//! (`webhook.failing`) and when wms deactivates it (`webhook.disabled`).

use super::model::WebhookDestination;
use super::public_url;
use crate::mail::{Letter, Mail, MailLink, SiteUrl};
use crate::users::Email;

/// What happened to the destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HealthNotice {
    /// Its last 4 attempts in a row failed.
    Failing,
    /// wms deactivated it, for `reason`.
    Disabled {
        /// The deactivation note.
        reason: String,
    },
}

/// One mail per admin about `notice` for `destination`, linking to its settings page on `site`.
/// The URL is shown redacted (it may carry the receiver's credentials in its query).
pub fn admin_mails(
    notice: &HealthNotice,
    destination: &WebhookDestination,
    admins: &[Email],
    site: &SiteUrl,
) -> Vec<Mail> {
    let url = public_url(&destination.url);
    let (subject, paragraphs) = match notice {
        HealthNotice::Failing => (
            format!("Webhook deliveries to {url} are failing"),
            vec![
                format!("The last 4 deliveries to the webhook destination {url} of your workspace failed in a row."),
                "wms keeps retrying them on its schedule. If every delivery keeps failing for 5 days, wms \
                 deactivates the destination. Its delivery log shows what the endpoint answered."
                    .to_owned(),
            ],
        ),
        HealthNotice::Disabled { reason } => (
            format!("Webhook destination {url} was deactivated"),
            vec![
                format!("wms deactivated the webhook destination {url} of your workspace: {reason}."),
                "Events are no longer sent to it. Fix the endpoint, activate the destination again on its \
                 page, then replay the events it missed."
                    .to_owned(),
            ],
        ),
    };
    let letter = Letter {
        paragraphs,
        link: Some(MailLink {
            label: "Open the destination".to_owned(),
            url: site.link(&format!("/settings/integrations/webhooks/{}", destination.id.0)),
        }),
        closing: vec!["You get this e-mail because you are an admin of the workspace.".to_owned()],
    };
    admins.iter().map(|to| Mail::compose(to.clone(), &subject, &letter)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhooks::model::DestinationId;
    use crate::workspace::WorkspaceId;
    use time::macros::datetime;

    #[test]
    fn each_admin_gets_one_mail_with_the_redacted_url_and_a_link() {
        let at = datetime!(2026-11-24 08:00:00 UTC);
        let d = WebhookDestination {
            id: DestinationId(7),
            workspace_id: WorkspaceId(1),
            url: "https://u:p@hooks.example.com/in?token=secret".into(),
            platform: "custom".into(),
            events: vec![],
            active: true,
            disabled_reason: None,
            disabled_at: None,
            created_at: at,
            updated_at: at,
            controls: Default::default(),
            headers_sealed: None,
        };
        let admins: Vec<Email> =
            ["a@example.com", "b@example.com"].iter().filter_map(|e| Email::new("email", e).ok()).collect();
        let mails = admin_mails(&HealthNotice::Failing, &d, &admins, &SiteUrl::new("https://wms.example.com"));
        assert_eq!(mails.len(), 2);
        assert!(mails[0].subject.contains("https://hooks.example.com/in") && mails[0].subject.contains("failing"));
        assert!(!mails[0].text.contains("secret") && !mails[0].text.contains("u:p"));
        assert!(mails[1].text.contains("https://wms.example.com/settings/integrations/webhooks/7"));
        let off = admin_mails(&HealthNotice::Disabled { reason: "410".into() }, &d, &admins[..1], &SiteUrl::new("x"));
        assert!(off[0].subject.contains("deactivated") && off[0].text.contains(": 410."));
    }
}
