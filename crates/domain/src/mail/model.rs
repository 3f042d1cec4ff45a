//! The mail values: what is sent, and the simple letter most mails are composed from.

use crate::users::Email;

/// One e-mail to one person, with a plain-text and an HTML body that say the same.
#[derive(Clone, PartialEq, Eq)]
pub struct Mail {
    /// The recipient.
    pub to: Email,
    /// The subject line (one line; line breaks are replaced by spaces when composed).
    pub subject: String,
    /// The plain-text body.
    pub text: String,
    /// The HTML body.
    pub html: String,
}

impl std::fmt::Debug for Mail {
    // Bodies hold one-time links: never in a log line through `{:?}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mail").field("to", &self.to.as_str()).field("subject", &self.subject).finish_non_exhaustive()
    }
}

/// A button-like link in a letter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailLink {
    /// What the link does ("Accept the invitation").
    pub label: String,
    /// The absolute URL (built on [`SiteUrl`]).
    pub url: String,
}

/// The shape of every mail wms sends: paragraphs, at most one link, then closing paragraphs.
/// [`Mail::compose`] renders it as text and as HTML (escaped), so no caller writes HTML.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Letter {
    /// Paragraphs before the link.
    pub paragraphs: Vec<String>,
    /// The one thing to do, if any.
    pub link: Option<MailLink>,
    /// Paragraphs after the link (why they got this mail, what to do if it was not them).
    pub closing: Vec<String>,
}

impl Mail {
    /// The mail of `letter` to `to`.
    pub fn compose(to: Email, subject: &str, letter: &Letter) -> Self {
        let subject: String =
            subject.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>().trim().to_owned();
        let mut text = String::new();
        let mut html = String::from(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"></head>\
             <body style=\"font-family: sans-serif; line-height: 1.5; color: #1f2328\">\n",
        );
        for p in &letter.paragraphs {
            text.push_str(p);
            text.push_str("\n\n");
            html.push_str(&format!("<p>{}</p>\n", escape(p)));
        }
        if let Some(link) = &letter.link {
            text.push_str(&format!("{}:\n{}\n\n", link.label, link.url));
            html.push_str(&format!(
                "<p><a href=\"{}\" style=\"display: inline-block; padding: 8px 16px; background: #0969da; \
                 color: #ffffff; text-decoration: none; border-radius: 6px\">{}</a></p>\n\
                 <p style=\"font-size: 0.9em; color: #59636e\">Or open this address: {}</p>\n",
                escape(&link.url),
                escape(&link.label),
                escape(&link.url)
            ));
        }
        for p in &letter.closing {
            text.push_str(p);
            text.push_str("\n\n");
            html.push_str(&format!("<p style=\"font-size: 0.9em; color: #59636e\">{}</p>\n", escape(p)));
        }
        text.push_str("-- \nwms\n");
        html.push_str("</body></html>\n");
        Self { to, subject, text, html }
    }
}

/// `s` safe inside HTML text and double-quoted attributes.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The public base URL of this wms (`http.public_url`, else its bind address), on which every
/// link in a mail is built: never the `Host` of a request, which whoever sends it chooses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteUrl(String);

impl SiteUrl {
    /// The base URL `base` (`https://wms.example.com`); a trailing `/` is dropped.
    pub fn new(base: &str) -> Self {
        Self(base.trim_end_matches('/').to_owned())
    }

    /// The absolute URL of `path` (which starts with `/`).
    pub fn link(&self, path: &str) -> String {
        format!("{}{path}", self.0)
    }

    /// The base URL itself.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to() -> Email {
        Email::new("to", "Ann@Example.test").expect("email")
    }

    #[test]
    fn a_letter_is_rendered_as_text_and_escaped_html() {
        let letter = Letter {
            paragraphs: vec!["Acme <Support> invited you.".into()],
            link: Some(MailLink { label: "Accept".into(), url: "https://wms.test/invitations/a?b=1&c=2".into() }),
            closing: vec!["Not you? Ignore this.".into()],
        };
        let mail = Mail::compose(to(), "You are invited\r\nBcc: x@y", &letter);
        assert_eq!(mail.subject, "You are invited  Bcc: x@y");
        assert_eq!(mail.to.as_str(), "ann@example.test");
        assert!(mail.text.contains("Acme <Support> invited you."));
        assert!(mail.text.contains("Accept:\nhttps://wms.test/invitations/a?b=1&c=2\n"));
        assert!(mail.html.contains("Acme &lt;Support&gt; invited you."));
        assert!(mail.html.contains("href=\"https://wms.test/invitations/a?b=1&amp;c=2\""));
        assert!(!mail.html.contains("<Support>"));
    }

    #[test]
    fn debug_never_shows_the_bodies() {
        let letter =
            Letter { link: Some(MailLink { label: "x".into(), url: "https://t/secret".into() }), ..Letter::default() };
        let shown = format!("{:?}", Mail::compose(to(), "s", &letter));
        assert!(!shown.contains("secret"), "{shown}");
    }

    #[test]
    fn links_are_built_on_the_site_url() {
        assert_eq!(SiteUrl::new("https://wms.test/").link("/password-reset/x"), "https://wms.test/password-reset/x");
    }
}
