//! Sending e-mail over SMTP (`mail.smtp_url`, `mail.from`) with lettre: `smtp://` upgrades to TLS
//! with STARTTLS when the server offers it, `smtps://` speaks TLS from the first byte; rustls
//! either way.

use std::time::Duration;

use async_trait::async_trait;
use domain::mail::{Mail, MailTransport, TransportError};
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

/// Why the mail settings cannot be used; names the setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid setting `{setting}`: {message}")]
pub struct SmtpSettingError {
    /// `mail.smtp_url` or `mail.from`.
    pub setting: &'static str,
    /// What is wrong (never the password).
    pub message: String,
}

fn url_error(message: impl Into<String>) -> SmtpSettingError {
    SmtpSettingError { setting: "mail.smtp_url", message: message.into() }
}

/// Where and how to reach the server, read from `mail.smtp_url`.
#[derive(Clone, PartialEq, Eq)]
pub struct SmtpServer {
    /// Host name or address.
    pub host: String,
    /// Port (default 25 for `smtp`, 465 for `smtps`).
    pub port: u16,
    /// `smtps`: TLS from the start; else STARTTLS when offered.
    pub implicit_tls: bool,
    /// User and password, when the URL has them.
    pub credentials: Option<(String, String)>,
}

impl std::fmt::Debug for SmtpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpServer")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("implicit_tls", &self.implicit_tls)
            .field("user", &self.credentials.as_ref().map(|c| c.0.as_str()))
            .finish_non_exhaustive()
    }
}

impl SmtpServer {
    /// Parses `smtp://[user:pass@]host:port` or `smtps://…`.
    ///
    /// # Errors
    /// [`SmtpSettingError`] naming `mail.smtp_url`.
    pub fn parse(raw: &str) -> Result<Self, SmtpSettingError> {
        let url = url::Url::parse(raw.trim())
            .map_err(|_| url_error("must be smtp://[user:password@]host:port or smtps://[user:password@]host:port"))?;
        let implicit_tls = match url.scheme() {
            "smtp" => false,
            "smtps" => true,
            other => return Err(url_error(format!("the scheme must be smtp or smtps, not `{other}`"))),
        };
        let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| url_error("names no host"))?;
        let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
        if url.path() != "" && url.path() != "/" {
            return Err(url_error("must not have a path"));
        }
        let decode =
            |s: &str| percent_decode(s).ok_or_else(|| url_error("the user or password is not valid percent-encoding"));
        let credentials = if url.username().is_empty() {
            None
        } else {
            Some((decode(url.username())?, decode(url.password().unwrap_or(""))?))
        };
        let port = url.port().unwrap_or(if implicit_tls { 465 } else { 25 });
        Ok(Self { host, port, implicit_tls, credentials })
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Parses `mail.from` (`wms <no-reply@example.com>` or a bare address).
///
/// # Errors
/// [`SmtpSettingError`] naming `mail.from`.
pub fn parse_from(raw: &str) -> Result<Mailbox, SmtpSettingError> {
    raw.trim().parse::<Mailbox>().map_err(|e| SmtpSettingError {
        setting: "mail.from",
        message: format!("must be an address such as `wms <no-reply@example.com>`: {e}"),
    })
}

/// [`MailTransport`] over SMTP.
#[derive(Clone)]
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl std::fmt::Debug for SmtpMailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpMailer").field("from", &self.from.to_string()).finish_non_exhaustive()
    }
}

impl SmtpMailer {
    /// A mailer for `server`, sending as `from`, each send bounded by `timeout`.
    ///
    /// # Errors
    /// When TLS cannot be set up for the host.
    pub fn new(server: &SmtpServer, from: Mailbox, timeout: Duration) -> Result<Self, SmtpSettingError> {
        let tls_params =
            TlsParameters::new(server.host.clone()).map_err(|e| url_error(format!("cannot set up TLS: {e}")))?;
        let tls = if server.implicit_tls { Tls::Wrapper(tls_params) } else { Tls::Opportunistic(tls_params) };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(server.host.clone())
            .port(server.port)
            .tls(tls)
            .timeout(Some(timeout));
        if let Some((user, password)) = &server.credentials {
            builder = builder.credentials(Credentials::new(user.clone(), password.clone()));
        }
        Ok(Self { transport: builder.build(), from })
    }
}

/// Answers that mean the address (or the message) will never be accepted: trying again changes
/// nothing. Every other failure, a refused login included, is a server or setting problem that an
/// operator fixes, so the mail waits for it.
const PERMANENT_CODES: [&str; 4] = ["501", "550", "551", "553"];

#[async_trait]
impl MailTransport for SmtpMailer {
    async fn send(&self, mail: &Mail) -> Result<(), TransportError> {
        let to = mail
            .to
            .as_str()
            .parse::<Mailbox>()
            .map_err(|e| TransportError::Permanent(format!("the recipient is not a valid address: {e}")))?;
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject.clone())
            .multipart(MultiPart::alternative_plain_html(mail.text.clone(), mail.html.clone()))
            .map_err(|e| TransportError::Permanent(format!("the message cannot be built: {e}")))?;
        match self.transport.send(message).await {
            Ok(_) => Ok(()),
            Err(e) => {
                let code = e.status().map(|c| c.to_string());
                let text = e.to_string();
                if e.is_permanent() && code.as_deref().is_some_and(|c| PERMANENT_CODES.contains(&c)) {
                    Err(TransportError::Permanent(text))
                } else {
                    Err(TransportError::Transient(text))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_give_host_port_tls_and_credentials() {
        let s = SmtpServer::parse("smtp://mailer:p%40ss@mail.example.com:2525").expect("valid");
        assert_eq!((s.host.as_str(), s.port, s.implicit_tls), ("mail.example.com", 2525, false));
        assert_eq!(s.credentials, Some(("mailer".into(), "p@ss".into())));
        let s = SmtpServer::parse("smtps://mail.example.com").expect("valid");
        assert_eq!((s.port, s.implicit_tls, s.credentials), (465, true, None));
        assert_eq!(SmtpServer::parse("smtp://127.0.0.1:1025").expect("valid").port, 1025);
    }

    #[test]
    fn bad_urls_are_named_and_never_show_the_password() {
        for bad in ["http://mail.example.com", "smtp://", "mail.example.com:25", "smtp://h:25/path"] {
            let e = SmtpServer::parse(bad).expect_err(bad);
            assert_eq!(e.setting, "mail.smtp_url");
        }
        let shown = format!("{:?}", SmtpServer::parse("smtp://u:hunter2@h:25").expect("valid"));
        assert!(!shown.contains("hunter2"), "{shown}");
    }

    #[test]
    fn the_sender_must_be_an_address() {
        assert!(parse_from("wms <no-reply@example.com>").is_ok());
        assert_eq!(parse_from("not an address").expect_err("invalid").setting, "mail.from");
    }
}
