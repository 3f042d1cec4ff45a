//! `wms serve`: the production server.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use crate::cli::ServeArgs;
use crate::config::{parse_bind, Settings};
use crate::platform::SystemClock;
use crate::CommandError;

/// Outside `wms dev`, the key that seals secrets at rest must not live next to them in the
/// database unless the operator says so (docs/contract.md, "Abuse limits").
fn require_encryption_key(settings: &Settings) -> Result<(), crate::config::SettingError> {
    if settings.secrets.encryption_key.is_some() || settings.secrets.allow_key_in_database {
        return Ok(());
    }
    Err(crate::config::SettingError {
        setting: "secrets.encryption_key".into(),
        message: "not set: `serve` needs the key that encrypts webhook secrets and channel credentials \
                  (WMS__SECRETS__ENCRYPTION_KEY, base64 of 32 bytes, e.g. `openssl rand -base64 32`); \
                  to keep it in the database next to the ciphertexts instead, set \
                  secrets.allow_key_in_database = true (WMS__SECRETS__ALLOW_KEY_IN_DATABASE)"
            .into(),
    })
}

/// The longest `serve` waits for the documentation it carries to be stored before listening.
const DOCS_WAIT: Duration = Duration::from_secs(15);

pub(super) async fn run(mut settings: Settings, args: ServeArgs) -> Result<(), CommandError> {
    let url = super::database_url(&settings)?;
    require_encryption_key(&settings)?;
    let bind = args.bind.as_deref().or(settings.http.bind.as_deref()).unwrap_or("0.0.0.0:8080").to_owned();
    let addr = parse_bind(if args.bind.is_some() { "--bind" } else { "http.bind" }, &bind)?;
    // Without http.public_url, links in mails are built on the address listened on.
    settings.http.bind = Some(bind);
    let db =
        crate::wiring::connect(&settings, &url, Duration::from_secs(settings.database.connect_timeout_secs)).await?;
    if settings.database.migrate_on_start {
        // Through PgBouncer, migrations (and their session lock) take the direct URL.
        let (migrate_db, migrate_url) = match &settings.database.migrate_url {
            Some(direct) => (
                crate::wiring::connect(&settings, direct, Duration::from_secs(settings.database.connect_timeout_secs))
                    .await?,
                direct.clone(),
            ),
            None => (db.clone(), url.clone()),
        };
        for v in adapters_postgres::migrate::run_pending_locked(&migrate_db, &migrate_url).await? {
            tracing::info!(version = %v, "applied migration");
        }
    }
    crate::secrets::resolve_key(&mut settings, &db, true).await?;
    crate::webhooks::seal_plain_headers(&settings, &db).await;
    // The documentation the binary carries. Listening waits for it (a quarter of a second on a new
    // database, less once it is stored), so that a server that answers `/readyz` answers
    // `search_product_docs` too, hybrid included when an embeddings provider is set; at most
    // `DOCS_WAIT`, after which a slow provider's ingest goes on in the background.
    let (docs_settings, docs_db) = (settings.clone(), db.clone());
    let mut ingest = tokio::spawn(async move {
        match crate::docs_search::ingest_embedded(&docs_settings, &docs_db).await {
            Ok(report) => tracing::info!(summary = %crate::docs_search::summary(&report), "documentation ingested"),
            Err(e) => tracing::error!(
                error = format!("{e:#}"),
                "documentation not ingested: search_product_docs finds nothing"
            ),
        }
    });
    if tokio::time::timeout(DOCS_WAIT, &mut ingest).await.is_err() {
        tracing::warn!(wait_secs = DOCS_WAIT.as_secs(), "documentation still ingesting: serving meanwhile");
    }
    let listener = TcpListener::bind(addr).with_context(|| format!("cannot listen on {addr}"))?;
    tracing::info!(%addr, "wms serve listening");
    let server = crate::wiring::server(&settings, &db, crate::wiring::state(&settings, &db), listener)?;
    crate::wiring::stop_on_signal(&server);
    let metrics = match &settings.metrics.bind {
        Some(bind) => {
            let addr = parse_bind("metrics.bind", bind)?;
            let listener =
                TcpListener::bind(addr).with_context(|| format!("cannot listen on {addr} (metrics.bind)"))?;
            tracing::info!(%addr, "metrics listening");
            let metrics = crate::prometheus::server(&db, listener)?;
            let handle = metrics.handle();
            tokio::spawn(metrics);
            Some(handle)
        }
        None => None,
    };
    let workers = crate::webhooks::start(&settings, crate::webhooks::engine(&settings, &db, Arc::new(SystemClock)));
    let dispatchers = crate::connectors::start(&settings, &db)?;
    let lifecycle = crate::lifecycle::start(&db);
    let sla_timer = crate::sla::start(&db);
    let backfill = crate::report_backfill::start(&db);
    let rollup = crate::report_rollup::start(&db);
    let mail = crate::mail::start(&settings, &db, Arc::new(SystemClock), crate::mail::Delivery::Serve)?;
    let audit_pruner = crate::retention::start(&settings, &db, Arc::new(SystemClock));
    let key_notices = crate::key_notices::start(&settings, &db, Arc::new(SystemClock));
    let result = server.await.context("server failed");
    audit_pruner.abort();
    lifecycle.abort();
    sla_timer.abort();
    backfill.abort();
    rollup.abort();
    key_notices.abort();
    if let Some(metrics) = metrics {
        metrics.stop(true).await;
    }
    // The server has stopped taking requests (SIGTERM or SIGINT); let deliveries in flight finish.
    let grace = Duration::from_secs(settings.http.shutdown_timeout_secs);
    tokio::join!(workers.stop(grace), dispatchers.stop(grace), mail.stop(grace));
    result?;
    tracing::info!("wms serve stopped");
    Ok(())
}
