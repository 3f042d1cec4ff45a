//! Wiring of e-mail: the site URL links are built on, the transport (SMTP with `mail.smtp_url`,
//! the console in `wms dev` without it) and the mail workers that send the outbox
//! (`adapters_postgres::mail`) from every instance. `docs/product/email.md` has the design.

use std::sync::Arc;
use std::time::Duration;

use adapters_outbound::smtp::{parse_from, SmtpMailer, SmtpServer};
use adapters_postgres::mail::PgMailQueue;
use adapters_postgres::Db;
use async_trait::async_trait;
use domain::common::ports::Clock;
use domain::mail::{Mail, MailFate, MailRetry, MailSender, MailTransport, SiteUrl, TransportError};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::{parse_retry_schedule, Settings};

/// Mails claimed by one worker at a time (sent one after the other, each recorded at once).
const CLAIM_BATCH: usize = 10;
/// How often finished mails past `mail.retention_days` are deleted.
const PRUNE_EVERY: Duration = Duration::from_secs(600);

/// The base URL of every link wms sends or prints: `http.public_url`, else the bind address (a
/// wildcard address read as loopback, since a link to 0.0.0.0 leads nowhere). Never a request's
/// `Host`, `X-Forwarded-Host` or `Forwarded`, which whoever sends the request chooses.
pub fn site_url(settings: &Settings) -> SiteUrl {
    if let Some(u) = settings.http.public_url.as_deref().filter(|u| !u.trim().is_empty()) {
        return SiteUrl::new(u.trim());
    }
    let bind = settings.http.bind.clone().unwrap_or_else(|| "0.0.0.0:8080".into());
    SiteUrl::new(&format!("http://{}", bind.replace("0.0.0.0", "127.0.0.1").replace("[::]", "[::1]")))
}

/// The retry rules from the settings.
pub fn retry(settings: &Settings) -> MailRetry {
    let m = &settings.mail;
    MailRetry {
        delays: parse_retry_schedule(&m.retry_schedule)
            .unwrap_or_default()
            .into_iter()
            .map(Duration::from_secs)
            .collect(),
        give_up_after: m.give_up_after_hours.map(|h| Duration::from_secs(h.saturating_mul(3600))),
        lease: Duration::from_secs(m.lease_secs),
    }
}

/// Where this instance sends mail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// `wms serve`: SMTP, or nothing (mail stays queued) without `mail.smtp_url`.
    Serve,
    /// `wms dev`: SMTP, or the console without `mail.smtp_url`.
    Dev,
}

/// Prints each mail on the console (`wms dev` without an SMTP server), links included, so a
/// developer can follow them.
#[derive(Debug, Clone, Copy)]
pub struct ConsoleMail;

#[async_trait]
impl MailTransport for ConsoleMail {
    async fn send(&self, mail: &Mail) -> Result<(), TransportError> {
        let body: String = mail.text.lines().map(|l| format!("  │ {l}\n")).collect();
        println!(
            "\n  ┌── e-mail (not sent: no mail.smtp_url) ──\n  │ To: {}\n  │ Subject: {}\n  │\n{body}  └──\n",
            mail.to.as_str(),
            mail.subject
        );
        Ok(())
    }
}

/// The transport of `delivery`; `None` in `serve` without `mail.smtp_url`.
///
/// # Errors
/// When the SMTP settings cannot be used (they were validated at load, so only a TLS set-up
/// failure).
pub fn transport(settings: &Settings, delivery: Delivery) -> anyhow::Result<Option<Arc<dyn MailTransport>>> {
    let m = &settings.mail;
    match m.smtp_url.as_deref().filter(|u| !u.trim().is_empty()) {
        Some(url) => {
            let server = SmtpServer::parse(url)?;
            let mailer = SmtpMailer::new(&server, parse_from(&m.from)?, Duration::from_secs(m.timeout_secs))?;
            Ok(Some(Arc::new(mailer)))
        }
        None if delivery == Delivery::Dev => Ok(Some(Arc::new(ConsoleMail))),
        None => Ok(None),
    }
}

/// The outbox's sender on `db`, through `transport`.
pub fn sender(
    settings: &Settings,
    db: &Db,
    transport: Arc<dyn MailTransport>,
    clock: Arc<dyn Clock>,
) -> Arc<MailSender> {
    Arc::new(MailSender { queue: Arc::new(PgMailQueue::new(db.clone())), transport, clock, retry: retry(settings) })
}

/// The running mail workers of this instance.
#[derive(Debug)]
pub struct MailWorkers {
    shutdown: watch::Sender<bool>,
    loops: Vec<JoinHandle<()>>,
    pruner: Option<JoinHandle<()>>,
}

/// Starts `mail.workers` workers for `delivery` (none, with a warning, in `serve` without
/// `mail.smtp_url`: the mail waits in the outbox for an instance that has it).
///
/// # Errors
/// When the SMTP transport cannot be built.
pub fn start(settings: &Settings, db: &Db, clock: Arc<dyn Clock>, delivery: Delivery) -> anyhow::Result<MailWorkers> {
    let (shutdown, shutdown_rx) = watch::channel(false);
    let Some(transport) = transport(settings, delivery)? else {
        tracing::warn!(
            "mail.smtp_url is not set (WMS__MAIL__SMTP_URL): e-mails (invitations, password resets) stay queued \
             until an instance runs with an SMTP server"
        );
        return Ok(MailWorkers { shutdown, loops: Vec::new(), pruner: None });
    };
    let sender = sender(settings, db, transport, clock.clone());
    let poll = Duration::from_millis(settings.mail.poll_interval_ms);
    let loops =
        (0..settings.mail.workers).map(|_| tokio::spawn(work(sender.clone(), poll, shutdown_rx.clone()))).collect();
    let retention = Duration::from_secs(settings.mail.retention_days * 86400);
    let pruner = tokio::spawn(prune(PgMailQueue::new(db.clone()), clock, retention, shutdown_rx));
    if settings.mail.workers > 0 {
        tracing::info!(workers = settings.mail.workers, "mail workers started");
    }
    Ok(MailWorkers { shutdown, loops, pruner: Some(pruner) })
}

impl MailWorkers {
    /// Stops claiming and lets sends in progress finish within `grace`; a mail still being sent
    /// after it is sent again by whichever instance claims it when its lease ends.
    pub async fn stop(mut self, grace: Duration) {
        let _ = self.shutdown.send(true);
        let deadline = tokio::time::Instant::now() + grace;
        for l in self.loops.drain(..) {
            let _ = tokio::time::timeout_at(deadline, l).await;
        }
        if let Some(p) = self.pruner.take() {
            p.abort();
        }
    }
}

async fn work(sender: Arc<MailSender>, poll: Duration, mut shutdown: watch::Receiver<bool>) {
    let mut failures = 0u32;
    loop {
        if *shutdown.borrow() {
            return;
        }
        let pause = match sender.send_due(CLAIM_BATCH).await {
            Ok(results) => {
                failures = 0;
                for r in &results {
                    match &r.fate {
                        MailFate::Sent => {}
                        MailFate::Retry { at, error } => {
                            tracing::warn!(mail_id = r.id.0, attempt = r.attempt, retry_at = %at, error = %error, "mail not sent yet");
                        }
                        MailFate::Failed { error } => {
                            tracing::error!(mail_id = r.id.0, attempt = r.attempt, error = %error, "mail not sent: given up");
                        }
                    }
                }
                if results.len() == CLAIM_BATCH {
                    continue;
                }
                poll
            }
            Err(e) => {
                failures += 1;
                tracing::error!(error = %e.0, "cannot send from the mail outbox");
                (poll * 2u32.pow(failures.min(5))).min(Duration::from_secs(30))
            }
        };
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            _ = shutdown.changed() => {}
        }
    }
}

async fn prune(queue: PgMailQueue, clock: Arc<dyn Clock>, retention: Duration, mut shutdown: watch::Receiver<bool>) {
    let mut next = Duration::from_secs(60);
    loop {
        tokio::select! {
            () = tokio::time::sleep(next) => {}
            _ = shutdown.changed() => return,
        }
        next = PRUNE_EVERY;
        match queue.prune(clock.now() - retention).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(rows = n, "pruned old mails"),
            Err(e) => tracing::warn!(error = %e.0, "cannot prune the mail outbox"),
        }
    }
}
