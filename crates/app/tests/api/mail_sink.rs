//! A real SMTP server for the tests: aiosmtpd (`crates/app/tests/py/smtp_sink.py`) on a loopback
//! port, each mail it accepts read back as a [`ReceivedMail`]; and the mail workers of a
//! [`TestApp`] pointed at it.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::helpers::TestApp;

/// One mail as the SMTP server received it.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct ReceivedMail {
    /// Envelope sender.
    pub from: String,
    /// Envelope recipients.
    pub to: Vec<String>,
    /// The `From` header.
    pub header_from: String,
    /// Subject.
    pub subject: String,
    /// The plain-text part.
    pub text: Option<String>,
    /// The HTML part.
    pub html: Option<String>,
}

impl ReceivedMail {
    /// The first link to `{base}{path_prefix}…` in the text body.
    pub fn link(&self, path_prefix: &str) -> Option<String> {
        let text = self.text.as_deref()?;
        text.split_whitespace().find(|w| w.starts_with("http") && w.contains(path_prefix)).map(str::to_owned)
    }
}

/// A running aiosmtpd.
pub struct SmtpSink {
    /// Its port on 127.0.0.1.
    pub port: u16,
    child: Child,
    received: Arc<Mutex<Vec<ReceivedMail>>>,
}

fn python() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::env::var_os("WMS_TEST_PYTHON").map(PathBuf::from).unwrap_or_else(|| root.join(".venv-tests/bin/python"))
}

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

impl SmtpSink {
    /// A server on a free port.
    pub async fn start() -> SmtpSink {
        Self::start_on(free_port()).await
    }

    /// A server on `port`.
    pub async fn start_on(port: u16) -> SmtpSink {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/py/smtp_sink.py");
        let mut child = Command::new(python())
            .arg(script)
            .arg(port.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start aiosmtpd (WMS_TEST_PYTHON with aiosmtpd)");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let ready = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
            .await
            .expect("aiosmtpd started in time")
            .expect("read aiosmtpd");
        assert_eq!(ready.as_deref(), Some("READY"), "aiosmtpd did not start");
        let received = Arc::new(Mutex::new(Vec::new()));
        let sink = received.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let mail: ReceivedMail = serde_json::from_str(&line).expect("a mail as JSON");
                sink.lock().expect("lock").push(mail);
            }
        });
        SmtpSink { port, child, received }
    }

    /// `smtp://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        smtp_url(self.port)
    }

    /// Every mail received so far.
    pub fn received(&self) -> Vec<ReceivedMail> {
        self.received.lock().expect("lock").clone()
    }

    /// The mails received for `address`.
    pub fn to(&self, address: &str) -> Vec<ReceivedMail> {
        self.received().into_iter().filter(|m| m.to.iter().any(|t| t.eq_ignore_ascii_case(address))).collect()
    }

    /// Waits until `n` mails have arrived (at most `timeout`); all received.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<ReceivedMail> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let got = self.received();
            if got.len() >= n || tokio::time::Instant::now() >= deadline {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits for the first mail to `address` (panics after `timeout`).
    pub async fn wait_for_mail_to(&self, address: &str, timeout: Duration) -> ReceivedMail {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(m) = self.to(address).into_iter().last() {
                return m;
            }
            assert!(tokio::time::Instant::now() < deadline, "no mail to {address} within {timeout:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Stops the server.
    pub async fn stop(mut self) {
        drop(self.child.stdin.take());
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        let _ = self.child.kill().await;
    }
}

/// `smtp://127.0.0.1:PORT`
pub fn smtp_url(port: u16) -> String {
    format!("smtp://127.0.0.1:{port}")
}

/// Settings for a test whose mail goes to `port`: fast polls and retries.
pub fn mail_to(settings: &mut app::config::Settings, port: u16) {
    settings.mail.smtp_url = Some(smtp_url(port));
    settings.mail.poll_interval_ms = 50;
    settings.mail.retry_schedule = "1".into();
    settings.mail.timeout_secs = 5;
    settings.mail.lease_secs = 10;
}

impl TestApp {
    /// Starts this app's mail workers (as `wms serve` does) with its settings.
    pub fn start_mail(&self) -> app::mail::MailWorkers {
        app::mail::start(
            &self.settings,
            &self.db,
            std::sync::Arc::new(app::platform::SystemClock),
            app::mail::Delivery::Serve,
        )
        .expect("mail workers")
    }
}
