//! `wms dev`: the whole service on a laptop with one command.

use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use adapters_postgres::Db;
use anyhow::Context;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::api_keys::ApiKeyState;
use domain::auth::{NewToken, TokenKind};
use domain::workspace::WorkspaceId;

use super::seed::DemoCredentials;
use crate::cli::{DevArgs, DevClusterArgs};
use crate::config::{parse_bind, Settings};
use crate::dev_db::EmbeddedCluster;
use crate::platform::OsRandom;
use crate::CommandError;

/// The subnets webhooks may reach in `wms dev` when `webhooks.allowed_subnets` is not set.
pub const DEV_ALLOWED_SUBNETS: &str = "127.0.0.0/8,::1/128";

pub(super) async fn run(mut settings: Settings, args: DevArgs) -> Result<(), CommandError> {
    let bind = args.bind.as_deref().or(settings.http.bind.as_deref()).unwrap_or("127.0.0.1:8080");
    let addr = parse_bind(if args.bind.is_some() { "--bind" } else { "http.bind" }, bind)?;
    // Bind first: a busy port should fail before anything else happens.
    let listener = TcpListener::bind(addr)
        .with_context(|| format!("cannot listen on {addr} (use --bind to pick another address)"))?;
    let data_dir = settings.dev.data_dir.clone();
    // Links in mails are built on the address actually listened on (a port 0 bind included).
    settings.http.bind = Some(listener.local_addr()?.to_string());
    // docs/contract.md: in dev, webhooks may reach loopback (a receiver on the laptop) unless configured.
    if settings.webhooks.allowed_subnets.is_none() {
        settings.webhooks.allowed_subnets = Some(DEV_ALLOWED_SUBNETS.to_owned());
    }
    // The settings pages are served over plain HTTP in dev: `Secure` cookies would not come back.
    settings.http.secure_cookies.get_or_insert(false);

    let cluster = match &settings.database.url {
        Some(_) => None,
        None => {
            let cluster = EmbeddedCluster::new(&data_dir, settings.dev.postgres_bin_dir.as_deref())?;
            cluster.start()?;
            create_database(&cluster).await?;
            settings.database.url = Some(cluster.url("wms"));
            Some(cluster)
        }
    };
    let result = serve(&settings, &data_dir, listener).await;
    if let Some(cluster) = cluster {
        tracing::info!("stopping the private PostgreSQL cluster");
        if let Err(e) = cluster.stop() {
            tracing::error!(error = %e, "could not stop the PostgreSQL cluster");
        }
    }
    result
}

async fn serve(settings: &Settings, data_dir: &Path, listener: TcpListener) -> Result<(), CommandError> {
    let url = super::database_url(settings)?;
    let db = crate::wiring::connect(settings, &url, Duration::from_secs(10)).await?;
    adapters_postgres::migrate::run_pending_locked(&db, &url).await?;
    // The assistant's documentation is searchable from the first request; unchanged pages are skipped.
    match crate::docs_search::ingest_dir(settings, &db, Path::new(crate::docs_search::DEFAULT_DOCS_DIR)).await {
        Ok(report) => println!("  {}", crate::docs_search::summary(&report)),
        Err(e) => tracing::warn!(error = %e, "documentation not ingested: search_product_docs will find nothing"),
    }
    let mut settings = settings.clone();
    crate::secrets::resolve_key(&mut settings, &db, false).await?;
    let settings = &settings;
    let cipher = crate::secrets::cipher(settings, &db, false).await?;
    let creds = demo_workspace(&db, cipher.as_ref(), data_dir).await?;
    let (key, key_is_new) = demo_key(&db, WorkspaceId(creds.workspace_id), data_dir).await?;

    let addr = listener.local_addr()?;
    let base = format!("http://{addr}");
    println!();
    println!("  wms dev is running");
    println!("  REST API        {base}/v1   (OpenAPI: {base}/v1/openapi.json)");
    println!("  Health          {base}/healthz  {base}/readyz");
    println!("  Settings        {base}/login");
    println!("  Database        {}", crate::wiring::redact_url(&url));
    println!("  Demo workspace  {} (plan advanced)", creds.workspace_id);
    println!(
        "  Admin           {} / {}",
        creds.email.as_deref().unwrap_or("?"),
        creds.password.as_deref().unwrap_or("?")
    );
    let key_note = if key_is_new { "new; kept in" } else { "the same as last time; kept in" };
    println!("  API key         {key}   ({key_note} {})", data_dir.join(DEMO_KEY_FILE).display());
    println!("  Try             curl -H 'Authorization: Bearer {key}' {base}/v1/channels");
    match settings.mail.smtp_url.as_deref().filter(|u| !u.trim().is_empty()) {
        Some(url) => println!("  E-mail          sent through {}", crate::wiring::redact_url(url)),
        None => println!("  E-mail          printed here (set WMS__MAIL__SMTP_URL to send it)"),
    }
    println!("  Platforms       sends go to {} (WMS__CONNECTORS__GRAPH_BASE_URL; scripts/platform-stand-in plays Meta locally)", settings.connectors.graph_base_url);
    println!("  Stop            Ctrl-C");
    println!();
    let server = crate::wiring::server(settings, &db, crate::wiring::state(settings, &db), listener)?;
    crate::wiring::stop_on_signal(&server);
    let clock = std::sync::Arc::new(crate::platform::SystemClock);
    let workers = crate::webhooks::start(settings, crate::webhooks::engine(settings, &db, clock.clone()));
    let dispatchers = crate::connectors::start(settings, &db)?;
    let lifecycle = crate::lifecycle::start(&db);
    let sla_timer = crate::sla::start(&db);
    let backfill = crate::report_backfill::start(&db);
    let rollup = crate::report_rollup::start(&db);
    let mail = crate::mail::start(settings, &db, clock.clone(), crate::mail::Delivery::Dev)?;
    let key_notices = crate::key_notices::start(settings, &db, clock.clone());
    let audit_pruner = crate::retention::start(settings, &db, clock);
    let result = server.await.context("server failed");
    audit_pruner.abort();
    lifecycle.abort();
    sla_timer.abort();
    backfill.abort();
    rollup.abort();
    key_notices.abort();
    let grace = Duration::from_secs(settings.http.shutdown_timeout_secs);
    tokio::join!(workers.stop(grace), dispatchers.stop(grace), mail.stop(grace));
    result?;
    Ok(())
}

/// The demo workspace of an earlier run (credentials kept in `<data_dir>/demo.json`), or a new one.
async fn demo_workspace(
    db: &Db,
    cipher: &dyn domain::common::ports::SecretCipher,
    data_dir: &Path,
) -> anyhow::Result<DemoCredentials> {
    let file = data_dir.join("demo.json");
    if let Some(creds) = std::fs::read(&file).ok().and_then(|b| serde_json::from_slice::<DemoCredentials>(&b).ok()) {
        if crate::wiring::workspace_service(db).find(WorkspaceId(creds.workspace_id)).await.map_err(|e| e.0)?.is_some()
        {
            return Ok(creds);
        }
    }
    println!("  seeding the demo workspace (90 days of conversations)…");
    let creds = super::seed_demo(db, cipher, None).await?;
    std::fs::create_dir_all(data_dir)?;
    write_private(&file, &serde_json::to_vec_pretty(&creds)?)?;
    Ok(creds)
}

/// Where `wms dev` keeps the demo API key between runs (owner-only, like `demo.json`).
const DEMO_KEY_FILE: &str = "demo-api-key";

/// The demo API key of an earlier run while it still works, else a new one (kept for the next
/// run); `true` when new. Minting one per run piled them up on the API Keys page.
async fn demo_key(db: &Db, ws: WorkspaceId, data_dir: &Path) -> anyhow::Result<(String, bool)> {
    let file = data_dir.join(DEMO_KEY_FILE);
    if let Ok(kept) = std::fs::read_to_string(&file) {
        let kept = kept.trim();
        if let Ok(presented) = domain::auth::parse(kept) {
            let kept_key = adapters_postgres::api_keys::find_by_digest(db, ws, &presented.digest).await?;
            if kept_key.is_some_and(|k| k.state(time::OffsetDateTime::now_utc()) == ApiKeyState::Active) {
                return Ok((kept.to_owned(), false));
            }
        }
    }
    let key = NewToken::generate(TokenKind::ApiKey, &OsRandom);
    adapters_postgres::api_keys::insert(db, ws, "wms dev demo key", &key).await?;
    std::fs::create_dir_all(data_dir)?;
    write_private(&file, key.secret.as_bytes())?;
    Ok((key.secret, true))
}

async fn create_database(cluster: &EmbeddedCluster) -> anyhow::Result<()> {
    let mut conn = AsyncPgConnection::establish(&cluster.url("postgres"))
        .await
        .context("cannot connect to the private cluster")?;
    #[derive(diesel::QueryableByName)]
    struct Exists {
        #[diesel(sql_type = diesel::sql_types::Bool)]
        e: bool,
    }
    let exists: Exists = diesel::sql_query("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'wms') AS e")
        .get_result(&mut conn)
        .await?;
    if !exists.e {
        diesel::sql_query("CREATE DATABASE wms").execute(&mut conn).await?;
    }
    Ok(())
}

/// `wms dev-cluster start|stop`: the embedded cluster alone, for scripts.
pub(super) fn cluster(args: DevClusterArgs) -> Result<(), CommandError> {
    let cluster = EmbeddedCluster::new(&args.data_dir, None)?;
    if args.action == "stop" {
        cluster.stop()?;
    } else {
        cluster.start()?;
        println!("{}", cluster.url("postgres"));
    }
    Ok(())
}

/// Writes a file only its owner can read: it holds the demo admin's password.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path)?;
    f.write_all(bytes)
}
